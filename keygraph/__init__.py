"""keygraph's runtime: the library every generated package imports.

Plans (`keygraph.plan`), the `Store` protocol and per-request `Session` (`keygraph.store`),
errors, cursors, the key codec, pages and paging. The stores that run plans live in
`keygraph.stores`: one package generated from any spec runs on each of them, and a
package's GraphQL API runs on `keygraph.api`.
"""

from .caller import Caller
from .cursor import CursorCodec
from .errors import (
    BadArgument,
    ConditionFailed,
    Conflict,
    Forbidden,
    InvalidCursor,
    KeygraphError,
    NotFound,
    StoreError,
    StoreNotConfigured,
    StoreThrottled,
    StoreUnavailable,
    TransactionCanceled,
    ValidationError,
)
from .page import Page
from .plan import TableDef
from .store import Session, Store

__all__ = [
    "BadArgument",
    "Caller",
    "ConditionFailed",
    "Conflict",
    "CursorCodec",
    "Forbidden",
    "InvalidCursor",
    "KeygraphError",
    "NotFound",
    "Page",
    "Session",
    "Store",
    "StoreError",
    "StoreNotConfigured",
    "StoreThrottled",
    "StoreUnavailable",
    "TableDef",
    "TransactionCanceled",
    "ValidationError",
]

"""The stores that run keygraph's plans: `EmbeddedStore` (one SQLite file) and
`DynamoDBStore` (AWS, DynamoDB Local or any endpoint), each over any `TableDef`.

Imported on first use, so the embedded store does not load boto3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from keygraph.admin import TableAdmin
from keygraph.store import Store

if TYPE_CHECKING:
    from .dynamodb.store import DynamoDBStore
    from .embedded.store import EmbeddedStore

__all__ = ["DynamoDBStore", "EmbeddedStore", "admin_of"]


def admin_of(store: Store) -> TableAdmin:
    """The control plane of a store's table (forwarding wrappers are looked through)."""
    from .dynamodb.admin import DynamoDBAdmin
    from .dynamodb.store import DynamoDBStore
    from .embedded.admin import EmbeddedAdmin
    from .embedded.store import EmbeddedStore
    from .view import Forwarding

    while isinstance(store, Forwarding):
        store = store.inner
    if isinstance(store, EmbeddedStore):
        return EmbeddedAdmin(store)
    if isinstance(store, DynamoDBStore):
        return DynamoDBAdmin(store.client, store.table)
    raise TypeError(f"no table administration for {type(store).__name__}")


def __getattr__(name: str) -> Any:
    if name == "EmbeddedStore":
        from .embedded.store import EmbeddedStore

        return EmbeddedStore
    if name == "DynamoDBStore":
        from .dynamodb.store import DynamoDBStore

        return DynamoDBStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The stores that run keygraph's plans: `EmbeddedStore` (one SQLite file) and
`DynamoDBStore` (AWS, DynamoDB Local or any endpoint), each over any `TableDef`.

Imported on first use, so the embedded store does not load boto3.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from keygraph.admin import TableAdmin
from keygraph.store import Store
from keygraph.streams import ChangeStream, NoStream

if TYPE_CHECKING:
    from .dynamodb.store import DynamoDBStore
    from .embedded.store import EmbeddedStore

log = logging.getLogger("keygraph.streams")

__all__ = ["DynamoDBStore", "EmbeddedStore", "admin_of", "stream_of"]


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


def stream_of(store: Store) -> ChangeStream:
    """The change stream of a store's table (StoreViews are looked through); NoStream when
    the table has none, or the store cannot read it."""
    from .view import StoreView

    while isinstance(store, StoreView):
        store = store.inner
    embedded = sys.modules.get(f"{__name__}.embedded.store")  # loaded if store is one
    if embedded is not None and isinstance(store, embedded.EmbeddedStore):
        from .embedded.changes import ChangeLog, kept
        from .embedded.watch import FileWrites

        if not kept(store._conn()):
            raise NoStream(_no_stream(store.table.name))
        log.info("reading the change stream of the table %s", store.table.name)
        keys = (store.table.partition_key, store.table.sort_key)
        return ChangeLog(store._conn, keys, FileWrites(store.path))
    from .dynamodb.store import DynamoDBStore

    if isinstance(store, DynamoDBStore):
        from .dynamodb.streams import DynamoDBChangeStream

        log.info("reading the change stream of the table %s", store.table.name)
        return DynamoDBChangeStream(store)
    raise NoStream(f"{type(store).__name__} has no change stream")


def _no_stream(table: str) -> str:
    return (
        f'the table {table} has no change stream: set stream = "NEW_AND_OLD_IMAGES" in '
        "[table] and run `keygraph table migrate`"
    )


def __getattr__(name: str) -> Any:
    if name == "EmbeddedStore":
        from .embedded.store import EmbeddedStore

        return EmbeddedStore
    if name == "DynamoDBStore":
        from .dynamodb.store import DynamoDBStore

        return DynamoDBStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

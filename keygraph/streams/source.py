"""Which change stream a store has: the one place that picks a store's reader."""

from __future__ import annotations

import logging

from keygraph.errors import StoreError
from keygraph.store import Store

from .records import ChangeStream

log = logging.getLogger("keygraph.streams")


class NoStream(StoreError):
    """The store's table has no change stream to read."""


def stream_of(store: Store) -> ChangeStream:
    """The change stream of a store's table (StoreViews are looked through); NoStream when
    the table has none, or the store cannot read it."""
    from keygraph.stores.embedded.changes import ChangeLog, kept
    from keygraph.stores.embedded.store import EmbeddedStore
    from keygraph.stores.view import StoreView

    while isinstance(store, StoreView):
        store = store.inner
    if isinstance(store, EmbeddedStore):
        if not kept(store._conn()):
            raise NoStream(_no_stream(store.table.name))
        log.info("reading the change stream of the table %s", store.table.name)
        return ChangeLog(store._conn, (store.table.partition_key, store.table.sort_key))
    from keygraph.stores.dynamodb.store import DynamoDBStore  # loads boto3: only when needed

    if isinstance(store, DynamoDBStore):
        from keygraph.stores.dynamodb.streams import DynamoDBChangeStream

        log.info("reading the change stream of the table %s", store.table.name)
        return DynamoDBChangeStream(store)
    raise NoStream(f"{type(store).__name__} has no change stream")


def _no_stream(table: str) -> str:
    return (
        f'the table {table} has no change stream: set stream = "NEW_AND_OLD_IMAGES" in '
        "[table] and run `keygraph table migrate`"
    )

"""Table administration on the embedded store, with DynamoDB's semantics: an index added to
a file holding items indexes every item that carries its key attributes (built inside one
write transaction, so it is ACTIVE when the call returns)."""

from __future__ import annotations

from keygraph.admin import LiveIndex, LiveTable
from keygraph.errors import ValidationError
from keygraph.plan import IndexDef, StreamView

from . import schema
from .keyrange import prefix_successor
from .store import EmbeddedStore


class EmbeddedAdmin:
    """The control plane of an embedded store's file."""

    def __init__(self, store: EmbeddedStore) -> None:
        self.store = store

    def describe(self) -> LiveTable:
        conn = self.store._conn()
        self.store._refresh(conn)
        live = self.store.live
        return LiveTable(
            name=live.name,
            partition_key=live.partition_key,
            sort_key=live.sort_key,
            indexes={index.name: LiveIndex(index) for index in live.indexes},
            ttl_attribute=schema.ttl_attribute(conn),
            point_in_time_recovery=None,
            stream=schema.stream(conn),
        )

    def create_table(self) -> None:
        """Nothing to do: opening the store created the file with every index."""

    def create_index(self, index: IndexDef) -> None:
        with self.store._write() as conn:
            try:
                schema.add_index(conn, self.store.table, index)
            except ValueError as exc:
                raise ValidationError(str(exc)) from exc

    def delete_index(self, name: str) -> None:
        with self.store._write() as conn:
            try:
                schema.drop_index(conn, self.store.table, name)
            except ValueError as exc:
                raise ValidationError(str(exc)) from exc

    def set_ttl(self, attribute: str | None) -> None:
        with self.store._write() as conn:
            schema.set_ttl_attribute(conn, attribute)

    def set_stream(self, view: StreamView | None) -> None:
        with self.store._write() as conn:
            schema.set_stream(conn, view)

    def set_point_in_time_recovery(self, enabled: bool) -> None:
        raise ValidationError(
            "the embedded store has no point-in-time recovery: back it up by copying its file"
        )

    def count(self, partition_prefix: str | None = None) -> int:
        conn = self.store._conn()
        if not partition_prefix:
            return int(conn.execute("SELECT count(*) FROM items").fetchone()[0])
        upper = prefix_successor(partition_prefix)
        if upper is None:
            row = conn.execute("SELECT count(*) FROM items WHERE pk >= ?", (partition_prefix,))
        else:
            row = conn.execute(
                "SELECT count(*) FROM items WHERE pk >= ? AND pk < ?", (partition_prefix, upper)
            )
        return int(row.fetchone()[0])

"""The embedded store's SQLite layout: one items table keyed (pk, sk) WITHOUT ROWID, holding
each item's body (plain JSON where it holds the values exactly, `plain` = 1, or does with
its top-level fractions as floats, 2; else DynamoDB JSON, 0: values.py) and size, with two
columns per GSI (its key values, NULL when the item lacks either attribute) and one partial
index per GSI over the items that have them.

The file's live indexes, TTL attribute, stream view and table name are recorded in its `meta`
table, as DynamoDB keeps a table's description: a new file gets every index (and the stream) of
its definition; later, indexes are added and removed only through `add_index` and
`drop_index` (UpdateTable), so a file opened under a newer spec keeps serving what it has
until it is migrated. Files written
before bodies could be plain gain the `plain` column (0 for their rows) when opened. The change
log's tables and triggers are changes.py's."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from keygraph.plan import IndexDef, StreamView, TableDef, stream_view

from . import changes
from .values import item_of

_INDEXES_KEY = "indexes"
_OLD_LAYOUT_KEY = "gsi_layout"
"""Files written before indexes could change held only each GSI's key names here."""
_TTL_KEY = "ttl_attribute"
_STREAM_KEY = "stream_view"

CREATE_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS tokens (token TEXT PRIMARY KEY, digest TEXT NOT NULL,"
    " at REAL NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS items (pk TEXT NOT NULL, sk TEXT NOT NULL, body TEXT NOT NULL,"
    " size INTEGER NOT NULL, plain INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (pk, sk))"
    " WITHOUT ROWID",
    *changes.CREATE_TABLES,
)
_ADD_PLAIN = "ALTER TABLE items ADD COLUMN plain INTEGER NOT NULL DEFAULT 0"

BODY_FORMAT = "plain JSON where exact (top-level fractions as floats), else DynamoDB JSON"
"""What a stored body is; caches of seeded files key on it."""


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


@functools.cache
def pk_column(index: IndexDef) -> str:
    return quote(f"{index.name}#pk")


@functools.cache
def sk_column(index: IndexDef) -> str:
    return quote(f"{index.name}#sk")


def index_columns(index: IndexDef) -> list[str]:
    """The columns an index adds to the items table."""
    return [pk_column(index)] + ([sk_column(index)] if index.sort_key else [])


def index_values(index: IndexDef, item: Mapping[str, Any]) -> list[str | None]:
    """The index key values of an item, all None when it is not in the (sparse) index."""
    names = [index.partition_key] + ([index.sort_key] if index.sort_key else [])
    values = [item.get(name) for name in names]
    if all(isinstance(v, str) for v in values):
        return values
    return [None] * len(values)


def insert_statement(indexes: tuple[IndexDef, ...]) -> str:
    """The statement writing one row: pk, sk, body, size, plain, then each GSI's columns."""
    columns = ["pk", "sk", "body", "size", "plain"]
    for index in indexes:
        columns += index_columns(index)
    marks = ", ".join("?" * len(columns))
    return f"INSERT OR REPLACE INTO items ({', '.join(columns)}) VALUES ({marks})"


def _existing_columns(conn: sqlite3.Connection) -> set[str]:
    return {row[1] for row in conn.execute("PRAGMA table_info(items)")}


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _set_meta(conn: sqlite3.Connection, key: str, value: str | None) -> None:
    if value is None:
        conn.execute("DELETE FROM meta WHERE key = ?", (key,))
    else:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def _encode(indexes: tuple[IndexDef, ...]) -> str:
    return json.dumps(
        [
            {
                "name": i.name,
                "partition_key": i.partition_key,
                "sort_key": i.sort_key,
                "projection": i.projection,
                "include": list(i.include),
            }
            for i in indexes
        ],
        sort_keys=True,
    )


def live_indexes(conn: sqlite3.Connection, table: TableDef) -> tuple[IndexDef, ...]:
    """The file's indexes, by its meta table (files of the older layout record only key
    names: their projections are taken from `table` where the names match, else ALL)."""
    text = _meta(conn, _INDEXES_KEY)
    if text is not None:
        return tuple(
            IndexDef(
                entry["name"],
                entry["partition_key"],
                entry["sort_key"],
                entry["projection"],
                tuple(entry["include"]),
            )
            for entry in json.loads(text)
        )
    old = json.loads(_meta(conn, _OLD_LAYOUT_KEY) or "{}")
    known = {index.name: index for index in table.indexes}
    found = []
    for name, (partition_key, sort_key) in sorted(old.items()):
        index = known.get(name)
        if index is not None and (index.partition_key, index.sort_key) == (partition_key, sort_key):
            found.append(index)
        else:
            found.append(IndexDef(name, partition_key, sort_key))
    return tuple(found)


def ttl_attribute(conn: sqlite3.Connection) -> str | None:
    return _meta(conn, _TTL_KEY)


def set_ttl_attribute(conn: sqlite3.Connection, attribute: str | None) -> None:
    _set_meta(conn, _TTL_KEY, attribute)


def stream(conn: sqlite3.Connection) -> StreamView | None:
    """What the file's change log records; None when it records nothing."""
    return stream_view(_meta(conn, _STREAM_KEY))


def set_stream(conn: sqlite3.Connection, view: StreamView | None) -> None:
    """Start (or restart, with another view) or stop the change log (inside the caller's
    write transaction)."""
    if view == stream(conn):
        return
    if view is None:
        changes.turn_off(conn)
    else:
        changes.turn_on(conn, view)
    _set_meta(conn, _STREAM_KEY, view)


def _create_sql_index(conn: sqlite3.Connection, index: IndexDef) -> None:
    columns = ", ".join([*index_columns(index), "pk", "sk"])
    conn.execute(
        f"CREATE INDEX {quote('gsi:' + index.name)} ON items ({columns}) "
        f"WHERE {pk_column(index)} IS NOT NULL"
    )


def _backfill(conn: sqlite3.Connection, index: IndexDef) -> None:
    assignments = ", ".join(f"{column} = ?" for column in index_columns(index))
    rows = conn.execute("SELECT pk, sk, body, plain FROM items").fetchall()
    conn.executemany(
        f"UPDATE items SET {assignments} WHERE pk = ? AND sk = ?",
        ((*index_values(index, item_of(body, plain)), pk, sk) for pk, sk, body, plain in rows),
    )


def add_index(conn: sqlite3.Connection, table: TableDef, index: IndexDef) -> None:
    """Add a GSI holding every item that carries its key attributes (inside the caller's
    write transaction)."""
    live = live_indexes(conn, table)
    if any(existing.name == index.name for existing in live):
        raise ValueError(f"the table already has an index {index.name}")
    existing_columns = _existing_columns(conn)
    for column in index_columns(index):
        if column.strip('"') not in existing_columns:
            conn.execute(f"ALTER TABLE items ADD COLUMN {column} TEXT")
    _backfill(conn, index)
    _create_sql_index(conn, index)
    _set_meta(conn, _INDEXES_KEY, _encode((*live, index)))


def drop_index(conn: sqlite3.Connection, table: TableDef, name: str) -> None:
    """Remove a GSI and its columns (inside the caller's write transaction)."""
    live = live_indexes(conn, table)
    gone = [index for index in live if index.name == name]
    if not gone:
        raise ValueError(f"the table has no index {name}")
    conn.execute(f"DROP INDEX IF EXISTS {quote('gsi:' + name)}")
    for column in index_columns(gone[0]):
        conn.execute(f"ALTER TABLE items DROP COLUMN {column}")
    _set_meta(conn, _INDEXES_KEY, _encode(tuple(i for i in live if i.name != name)))


def ensure(conn: sqlite3.Connection, table: TableDef) -> None:
    """Create the layout of a new file with every index and the TTL of `table`; an existing
    file keeps its own (converted from the older meta format when need be). Runs in one write
    transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        new = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'items'").fetchone() is None
        for statement in CREATE_TABLES:
            conn.execute(statement)
        if "plain" not in _existing_columns(conn):
            conn.execute(_ADD_PLAIN)
        if new:
            _set_meta(conn, _INDEXES_KEY, _encode(()))
            for index in table.indexes:
                add_index(conn, table, index)
            set_ttl_attribute(conn, table.ttl_attribute)
            set_stream(conn, table.stream)
        elif _meta(conn, _INDEXES_KEY) is None:
            _set_meta(conn, _INDEXES_KEY, _encode(live_indexes(conn, table)))
            set_ttl_attribute(conn, table.ttl_attribute)
            _set_meta(conn, _OLD_LAYOUT_KEY, None)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise

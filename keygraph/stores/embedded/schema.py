"""The embedded store's SQLite layout: one items table keyed (pk, sk) WITHOUT ROWID, holding
each item's body (plain JSON where it holds the values exactly, `plain` = 1; else DynamoDB
JSON) and size, with two columns per GSI (its key values, NULL when the item lacks either
attribute) and one partial index per GSI over the items that have them. Files written before
bodies could be plain gain the `plain` column (0 for their rows) when opened."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from keygraph.plan import IndexDef, TableDef

from .values import item_of

_LAYOUT_KEY = "gsi_layout"

CREATE_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS items (pk TEXT NOT NULL, sk TEXT NOT NULL, body TEXT NOT NULL,"
    " size INTEGER NOT NULL, plain INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (pk, sk))"
    " WITHOUT ROWID",
)
_ADD_PLAIN = "ALTER TABLE items ADD COLUMN plain INTEGER NOT NULL DEFAULT 0"

BODY_FORMAT = "plain JSON where exact, else DynamoDB JSON"
"""What a stored body is; caches of seeded files key on it."""


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def pk_column(index: IndexDef) -> str:
    return quote(f"{index.name}#pk")


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


def insert_statement(table: TableDef) -> str:
    """The statement writing one row: pk, sk, body, size, plain, then each GSI's columns."""
    columns = ["pk", "sk", "body", "size", "plain"]
    for index in table.indexes:
        columns += index_columns(index)
    marks = ", ".join("?" * len(columns))
    return f"INSERT OR REPLACE INTO items ({', '.join(columns)}) VALUES ({marks})"


def _layout(table: TableDef) -> dict[str, list[str | None]]:
    return {i.name: [i.partition_key, i.sort_key] for i in table.indexes}


def _existing_columns(conn: sqlite3.Connection) -> set[str]:
    return {row[1] for row in conn.execute("PRAGMA table_info(items)")}


def _create_index(conn: sqlite3.Connection, index: IndexDef) -> None:
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


def ensure(conn: sqlite3.Connection, table: TableDef) -> None:
    """Create the layout, or bring an existing file's GSIs in line with the table definition
    (new or changed GSIs are built from the stored items). Runs in one write transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in CREATE_TABLES:
            conn.execute(statement)
        if "plain" not in _existing_columns(conn):
            conn.execute(_ADD_PLAIN)
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (_LAYOUT_KEY,)).fetchone()
        old: dict[str, list[str | None]] = json.loads(row[0]) if row else {}
        new = _layout(table)
        if old != new:
            existing = _existing_columns(conn)
            for name, keys in old.items():
                if keys != new.get(name):
                    conn.execute(f"DROP INDEX IF EXISTS {quote('gsi:' + name)}")
            for index in table.indexes:
                if old.get(index.name) == new[index.name]:
                    continue
                for column in index_columns(index):
                    if column.strip('"') not in existing:
                        conn.execute(f"ALTER TABLE items ADD COLUMN {column} TEXT")
                _backfill(conn, index)
                _create_index(conn, index)
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (_LAYOUT_KEY, json.dumps(new, sort_keys=True)),
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise

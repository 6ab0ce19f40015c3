"""Fresh stores for tests and benchmarks: a table definition exercising both GSI kinds, and
a store of either kind ("embedded" or "dynamodb-local") over any table definition."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path
from typing import Any

from keygraph.plan import IndexDef, TableDef
from keygraph.store import Store
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.store import DynamoDBStore
from keygraph.stores.embedded.store import EmbeddedStore

TEST_TABLE = TableDef(
    name="kg_test",
    partition_key="PK",
    sort_key="SK",
    indexes=(
        IndexDef("GSI1", "GSI1PK", "GSI1SK"),
        IndexDef("Sparse", "SPK", "SSK", "INCLUDE", ("status",)),
    ),
)
"""A general GSI (projection ALL) and a sparse one projecting only `status`."""

KINDS = ("embedded", "dynamodb-local")


def unique_table(table: TableDef) -> TableDef:
    """The definition under a name nothing else uses."""
    return dataclasses.replace(table, name=f"{table.name}_{uuid.uuid4().hex[:12]}")


def open_store(kind: str, table: TableDef, directory: Path, client: Any = None) -> Store:
    """A fresh, empty store. "embedded": a new SQLite file in `directory`. "dynamodb-local":
    a new table with a unique name through `client` (its name is the store's `table.name`;
    drop it with `drop_store`)."""
    if kind == "embedded":
        return EmbeddedStore(table, path=directory / f"{uuid.uuid4().hex}.sqlite3")
    if kind == "dynamodb-local":
        live = unique_table(table)
        admin.create_table(client, live)
        return DynamoDBStore(live, client=client, max_concurrency=8)
    raise ValueError(f"unknown store kind {kind!r}; expected one of {KINDS}")


async def drop_store(store: Store) -> None:
    """Close a store from `open_store`, deleting its DynamoDB table if it has one."""
    await store.close()
    if isinstance(store, DynamoDBStore):
        admin.delete_table(store.client, store.table.name)

"""Shared fixtures.

- `dynamodb_local`: one DynamoDB Local process for the whole run (skipped with a how-to when
  Java or the jar is missing; a failure instead when the CI variable is set).
- `dynamodb_client`: one low-level client on it, shared by every DynamoDB store.
- `store_factory`: `await store_factory(kind, table)` gives a fresh store of kind "embedded"
  (a SQLite file under tmp_path) or "dynamodb-local" (a new table with a unique name, deleted
  afterwards) for any TableDef; every store is closed at teardown.
- `embedded_store`, `dynamodb_store`: stores over TEST_TABLE.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from generated.runtime.plan import IndexDef, TableDef
from generated.runtime.store import Store
from server.store import admin
from server.store.dynamodb import DynamoDBStore, make_client
from server.store.embedded import EmbeddedStore
from server.store.local import (
    LOCAL_KEY_ID,
    LOCAL_REGION,
    LOCAL_SECRET,
    DynamoDBLocal,
    LocalUnavailable,
)

TEST_TABLE = TableDef(
    name="kg_test",
    partition_key="PK",
    sort_key="SK",
    indexes=(
        IndexDef("GSI1", "GSI1PK", "GSI1SK"),
        IndexDef("Sparse", "SPK", "SSK", "INCLUDE", ("status",)),
    ),
)
"""The contract suite's table: a general GSI (ALL) and a sparse one projecting `status`."""

StoreFactory = Callable[..., Awaitable[Store]]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"DynamoDB Local is required in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def dynamodb_local() -> Iterator[DynamoDBLocal]:
    local = DynamoDBLocal()
    try:
        local.start()
    except LocalUnavailable as exc:
        _unavailable(str(exc))
    yield local
    local.stop()


@pytest.fixture(scope="session")
def dynamodb_client(dynamodb_local: DynamoDBLocal) -> Iterator[Any]:
    client = make_client(
        dynamodb_local.endpoint_url,
        LOCAL_REGION,
        16,
        LOCAL_KEY_ID,
        LOCAL_SECRET,
        read_timeout=60,
    )
    yield client
    client.close()


def unique_table(table: TableDef) -> TableDef:
    """The definition under a name no other test uses."""
    return dataclasses.replace(table, name=f"{table.name}_{uuid.uuid4().hex[:12]}")


def open_store(kind: str, table: TableDef, directory: Path, client: Any = None) -> Store:
    """A fresh store; for "dynamodb-local" `client` must be a DynamoDB Local client, and the
    caller deletes the table (its name is the returned store's `table.name`)."""
    if kind == "embedded":
        return EmbeddedStore(directory / f"{uuid.uuid4().hex}.sqlite3", table)
    if kind == "dynamodb-local":
        live = unique_table(table)
        admin.create_table(client, live)
        return DynamoDBStore(live, client=client, max_concurrency=8)
    raise ValueError(f"unknown store kind {kind!r}")


@pytest.fixture
async def store_factory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[StoreFactory]:
    opened: list[Store] = []
    tables: list[str] = []
    client: Any = None

    async def make(kind: str, table: TableDef = TEST_TABLE) -> Store:
        nonlocal client
        if kind == "dynamodb-local" and client is None:
            client = request.getfixturevalue("dynamodb_client")
        store = open_store(kind, table, tmp_path, client)
        opened.append(store)
        if isinstance(store, DynamoDBStore):
            tables.append(store.table.name)
        return store

    yield make
    for store in opened:
        await store.close()
    for name in tables:
        admin.delete_table(client, name)


@pytest.fixture
async def embedded_store(store_factory: StoreFactory) -> Store:
    return await store_factory("embedded")


@pytest.fixture
async def dynamodb_store(store_factory: StoreFactory) -> Store:
    return await store_factory("dynamodb-local")

"""Shared fixtures.

- `dynamodb_local`: one DynamoDB Local process for the whole run (skipped with a how-to when
  Java or the jar is missing; a failure instead when the CI variable is set).
- `dynamodb_client`: one low-level boto3 client on it, for creating and deleting tables;
  every DynamoDB store makes its data-plane transport from its endpoint and credentials.
- `store_factory`: `await store_factory(kind, table)` gives a fresh store of kind "embedded"
  (a SQLite file under tmp_path) or "dynamodb-local" (a new table with a unique name, deleted
  afterwards) for any TableDef; every store is closed at teardown.
- `kind`: "embedded", then "dynamodb-local": a test taking it runs on both stores.
- `embedded_store`, `dynamodb_store`: stores over TEST_TABLE.
- `redis_server`: a fresh `redis-server` for one test (tests/redis_server.py; skipped with a
  how-to when it is missing, a failure instead when the CI variable is set).

testkit.stores has the same helpers for code that cannot take fixtures.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from keygraph.plan import TableDef
from keygraph.store import Store
from keygraph.stores.dynamodb.local import (
    LOCAL_KEY_ID,
    LOCAL_REGION,
    LOCAL_SECRET,
    DynamoDBLocal,
    LocalUnavailable,
)
from keygraph.stores.dynamodb.store import make_client
from testkit.stores import TEST_TABLE, drop_store, open_store
from tests.redis_server import RedisServer, RedisUnavailable

StoreFactory = Callable[..., Awaitable[Store]]


def _unavailable(reason: str, what: str = "DynamoDB Local") -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required in CI: {reason}")
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


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    try:
        server = RedisServer()
    except RedisUnavailable as exc:
        _unavailable(str(exc), "redis-server")
    server.start()
    yield server
    server.stop()


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


@pytest.fixture
async def store_factory(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[StoreFactory]:
    opened: list[Store] = []
    client: Any = None

    async def make(kind: str, table: TableDef = TEST_TABLE) -> Store:
        nonlocal client
        if kind == "dynamodb-local" and client is None:
            client = request.getfixturevalue("dynamodb_client")
        store = open_store(kind, table, tmp_path, client)
        opened.append(store)
        return store

    yield make
    for store in opened:
        await drop_store(store)


@pytest.fixture(
    params=["embedded", pytest.param("dynamodb-local", marks=pytest.mark.dynamodb_local)]
)
def kind(request: pytest.FixtureRequest) -> str:
    """Each store kind in turn: a test taking it runs on both."""
    kind: str = request.param
    return kind


@pytest.fixture
async def embedded_store(store_factory: StoreFactory) -> Store:
    return await store_factory("embedded")


@pytest.fixture
async def dynamodb_store(store_factory: StoreFactory) -> Store:
    return await store_factory("dynamodb-local")

"""`table migrate` on DynamoDB Local behind a fault-injecting proxy: throttled, failing and
slow calls are retried and the migration completes; an update whose answer is lost (it ran)
is not sent again, the run stops with the store unavailable, and the next run continues
from the checkpoint to the same end."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from keygraph.migrate import plan as plan_module
from keygraph.plan import Put, TableDef
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET, DynamoDBLocal
from keygraph.stores.dynamodb.store import DynamoDBStore
from server.cli import main
from testkit.faults import (
    INTERNAL_SERVER_ERROR,
    RESET_AFTER,
    RESET_BEFORE,
    THROTTLING,
    THROUGHPUT_EXCEEDED,
    FaultProxy,
    delay,
)
from testkit.stores import unique_table
from tests.keygraph.migrate.test_migrate import BOOKS, library
from tests.packages import Importer

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def proxy(dynamodb_local: DynamoDBLocal) -> Iterator[FaultProxy]:
    with FaultProxy(dynamodb_local.endpoint_url, seed=3) as proxy:
        yield proxy


@pytest.fixture
def table(
    dynamodb_client: Any,
    v1: Importer,
    v2: Importer,
    proxy: FaultProxy,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[TableDef]:
    """A table on DynamoDB Local with v2's indexes (so that migrating is backfilling, not
    waiting for DynamoDB Local to build an index) holding acme's library as v1 wrote it;
    the CLI set to reach it through the proxy."""
    live = unique_table(v2("table").TABLE)
    admin.create_table(dynamodb_client, live)

    async def load() -> None:
        written = dataclasses.replace(v1("table").TABLE, name=live.name)
        store = DynamoDBStore(written, client=dynamodb_client, max_concurrency=8)
        for item in library(v1, "acme"):
            await store.put(Put(item))
        await store.close()

    asyncio.run(load())
    for variable, value in {
        "KEYGRAPH_STORE": "dynamodb",
        "KEYGRAPH_DYNAMODB_ENDPOINT": proxy.url,
        "KEYGRAPH_TABLE": live.name,
        "KEYGRAPH_REGION": LOCAL_REGION,
        "KEYGRAPH_JWT_SECRET": "s" * 40,
        "AWS_ACCESS_KEY_ID": LOCAL_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": LOCAL_SECRET,
    }.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.setattr(plan_module, "PAGE", 16)
    yield live
    admin.delete_table(dynamodb_client, live.name)


def migrate() -> int:
    return main(["table", "migrate", "--package", "library_v2", "--no-progress"])


def test_a_migration_completes_through_throttling_errors_and_latency(
    table: TableDef, proxy: FaultProxy, capsys: pytest.CaptureFixture[str]
) -> None:
    proxy.add(THROTTLING, operations={"UpdateItem"}, times=6)
    proxy.add(THROUGHPUT_EXCEEDED, operations={"Scan", "PutItem"}, times=3)
    proxy.add(INTERNAL_SERVER_ERROR, operations={"Scan", "GetItem"}, times=2)
    proxy.add(RESET_BEFORE, operations={"Scan"}, times=1)
    proxy.add(RESET_AFTER, operations={"PutItem"}, times=1)  # a checkpoint: unconditional
    proxy.add(delay(0.2), operations={"UpdateItem"}, times=4)
    assert migrate() == 0
    assert f"{BOOKS} updated (Book {BOOKS})" in capsys.readouterr().out
    assert sum(proxy.injected.values()) == 17
    proxy.clear()
    assert migrate() == 0
    printed = capsys.readouterr().out
    assert "nothing to do" in printed
    assert "0 updated" in printed


def test_an_update_lost_after_it_ran_stops_the_run_and_the_next_continues(
    table: TableDef, proxy: FaultProxy, capsys: pytest.CaptureFixture[str]
) -> None:
    proxy.add(delay(0), operations={"UpdateItem"}, times=20)  # past the first checkpoint
    proxy.add(RESET_AFTER, operations={"UpdateItem"}, times=1)
    assert migrate() == 3
    assert "run again to continue" in capsys.readouterr().err
    assert 20 < proxy.calls["UpdateItem"] < BOOKS  # the run stopped
    assert migrate() == 0
    assert "resumed after" in capsys.readouterr().out
    # Every book updated once over both runs: the lost update was not sent again, and the
    # next run found its item done.
    assert proxy.calls["UpdateItem"] == BOOKS
    assert migrate() == 0
    assert "nothing to do" in capsys.readouterr().out

"""Racing mutations (tests/server/fuzz/races.py) against `make serve`'s app in process, on
both stores.
On DynamoDB Local the store reaches the endpoint through a proxy that closes connections idle
for IDLE seconds, and every third round (from the second) waits longer than that first, so
calls also meet connections the endpoint closed. CI plays ROUNDS rounds of each scenario;
KEYGRAPH_FUZZ_EXAMPLES=N plays N / HUNT_SHARE (races.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from generated.table import TABLE
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET
from keygraph.stores.dynamodb.store import DynamoDBStore
from testkit.stores import unique_table
from tests.conftest import StoreFactory
from tests.server.fuzz.checks import Failures
from tests.server.fuzz.idle_proxy import IdleProxy
from tests.server.fuzz.races import SCENARIOS, plans, play
from tests.server.fuzz.target import STORES, Target, errors_logged, open_app

ROUNDS = 5
IDLE = 1.0
"""Seconds the proxy lets a connection idle before closing it."""


@pytest.fixture(params=STORES)
async def racer(
    request: pytest.FixtureRequest, store_factory: StoreFactory
) -> AsyncIterator[tuple[Target, IdleProxy | None]]:
    if request.param == "embedded":
        store = await store_factory("embedded", TABLE)
        async with open_app(store) as app:
            yield app, None
        return
    client: Any = request.getfixturevalue("dynamodb_client")
    host, port = client.meta.endpoint_url.split("//")[1].split(":")
    proxy = IdleProxy(host, int(port), IDLE)
    await proxy.start()
    table = unique_table(TABLE)
    admin.create_table(client, table)
    store = DynamoDBStore(
        table,
        endpoint_url=proxy.url,
        region=LOCAL_REGION,
        access_key_id=LOCAL_KEY_ID,
        secret_access_key=LOCAL_SECRET,
        max_concurrency=8,
    )
    try:
        async with open_app(store) as app:
            yield app, proxy
    finally:
        await store.close()
        admin.delete_table(client, table.name)
        await proxy.stop()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_racing_mutations_keep_the_invariants(
    racer: tuple[Target, IdleProxy | None], name: str, caplog: pytest.LogCaptureFixture
) -> None:
    app, proxy = racer
    caplog.set_level(logging.WARNING)
    failures = Failures()
    scenario = SCENARIOS[name](app, failures)

    async def pause(number: int) -> None:
        if proxy is not None and number % 3 == 1:
            await asyncio.sleep(IDLE * 1.5)

    await play(scenario, plans(scenario.kinds, ROUNDS), pause)
    for record in errors_logged(caplog.records):
        failures.add(f"error logged: {record}", name)
    if proxy is not None:
        assert proxy.closed_idle > 0, "no round met a connection the endpoint had closed"
    assert not failures, "\n" + failures.report()

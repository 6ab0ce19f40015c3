"""A spec that gains a change stream: the plan turns it on before the backfill, so the
backfill's writes, made outside GraphQL, are in the stream like any other write."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from keygraph.migrate.plan import IndexStep, SettingStep, make_plan
from keygraph.migrate.run import migrate
from keygraph.plan import Put, StreamView
from keygraph.store import Store
from keygraph.stores import admin_of, stream_of
from keygraph.stores.embedded.store import EmbeddedStore
from tests.conftest import StoreFactory
from tests.keygraph.migrate.test_migrate import BOOKS, library, reopen, short, target_of
from tests.keygraph.stores.test_store_streams import everything
from tests.packages import Importer

VIEW: StreamView = "NEW_AND_OLD_IMAGES"


@pytest.fixture
async def loaded(store_factory: StoreFactory, kind: str, v1: Importer) -> Store:
    """A v1 table (no stream) holding one tenant's library."""
    store = await store_factory(kind, v1("table").TABLE)
    for item in library(v1, "acme"):
        await store.put(Put(item))
    return store


@pytest.fixture
def client(request: pytest.FixtureRequest, kind: str) -> Any:
    return request.getfixturevalue("dynamodb_client") if kind == "dynamodb-local" else None


async def test_a_stream_the_spec_gained_is_on_before_the_backfill(
    loaded: Any, kind: str, v2: Importer, client: Any
) -> None:
    store = reopen(loaded, v2, client)
    target = target_of(v2, store)
    target = dataclasses.replace(target, table=dataclasses.replace(target.table, stream=VIEW))
    admin = admin_of(store)
    plan = await make_plan(target, store, admin, short(kind))
    assert plan.steps == [
        IndexStep("create", v2("table").TABLE.index("GSI2")),
        SettingStep("stream", VIEW),
    ]
    assert f"change stream on ({VIEW})" in plan.render()
    await migrate(plan, target, store, admin)
    live = admin.describe()
    assert live is not None
    assert live.stream == VIEW
    assert (await make_plan(target, store, admin, short(kind))).empty
    if isinstance(store, EmbeddedStore):  # DynamoDB Streams is read by its own reader
        records = await everything(stream_of(store))  # the books, and the checkpoint's item
        records = [r for r in records if r.new is not None and r.new.get("_type") == "BOOK"]
        assert len(records) == BOOKS
        assert {r.event for r in records} == {"MODIFY"}
        assert all(r.old is not None and "GSI2PK" not in r.old for r in records)
        assert all(r.new is not None and "GSI2PK" in r.new for r in records)
    if store is not loaded:
        await store.close()


async def test_turning_a_stream_off_needs_allow_destructive(
    loaded: Any, kind: str, v1: Importer, client: Any
) -> None:
    store = reopen(loaded, v1, client)
    admin = admin_of(store)
    admin.set_stream(VIEW)
    target = target_of(v1, store)
    kept = await make_plan(target, store, admin, short(kind))
    assert kept.steps == []
    assert any("change stream (NEW_AND_OLD_IMAGES) is kept" in note for note in kept.notes)
    off = await make_plan(target, store, admin, short(kind), allow_destructive=True)
    assert off.steps == [SettingStep("stream", None)]
    await migrate(off, target, store, admin)
    live = admin.describe()
    assert live is not None
    assert live.stream is None
    if store is not loaded:
        await store.close()

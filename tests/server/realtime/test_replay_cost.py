"""A resume from an old cursor is work its subscriber pays for: the replay reads only its own
tenant's records where the store can skip the others (the embedded store, in SQL), pays a
point for each read and each record decoded (DynamoDB Streams decodes none of another
tenant's images, but reads them), and ends THROTTLED when its tenant's budget is spent.
Measured on each store's own stream: the records the replay was handed, and the budget."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from starlette.applications import Starlette

from generated.table import TABLE
from keygraph.plan import Put
from keygraph.realtime.hub import REPLAY_READ
from keygraph.serve.budget import TenantBudget
from keygraph.store import Store
from keygraph.stores import stream_of
from keygraph.stores.embedded import changes
from keygraph.streams import Batch, ChangeStream, Partitions, Position, Shard
from server.settings import Settings
from tests.conftest import StoreFactory
from tests.server.conftest import Api
from tests.server.realtime.conftest import Connect, receive, settle, spec_app, subscribe
from tests.server.realtime.reader_watch import READER_TASK
from tests.server.realtime.test_change_log import caught_up
from tests.server.realtime.test_fields import event

RESUME = """subscription($id: ID!, $after: String) {
  userChanged(id: $id, after: $after) { change cursor user { name } }
}"""
RENAME = """mutation($id: ID!, $v: Int!, $name: String!) {
  updateUser(input: {id: $id, expectedVersion: $v, name: $name}) { version }
}"""
OTHERS = 120
"""Records of another tenant written between the cursor and the resumed event."""


class Tally:
    """The store's stream, counting what reads other than the live reader's were handed."""

    def __init__(self, stream: ChangeStream) -> None:
        self.stream = stream
        self.handed: list[str] = []
        """The partition key of every record a replay was handed."""
        self.skipped = 0
        self.reads = 0

    def reset(self) -> None:
        """Forgets what was read so far: what comes next is counted alone."""
        self.handed, self.skipped, self.reads = [], 0, 0

    async def shards(self) -> list[Shard]:
        return await self.stream.shards()

    async def read(
        self, position: Position, limit: int = 1000, *, within: Partitions | None = None
    ) -> Batch:
        batch = await self.stream.read(position, limit, within=within)
        task = asyncio.current_task()
        if task is None or task.get_name() != READER_TASK:
            self.reads += 1
            self.handed += [str(record.keys["PK"]) for record in batch.records]
            self.skipped += batch.skipped
        return batch

    async def close(self) -> None:
        close = getattr(self.stream, "close", None)
        if close is not None:
            await close()


@pytest.fixture
async def store(kind: str, store_factory: StoreFactory) -> Store:
    return await store_factory(kind, TABLE)


@pytest.fixture
def tally(store: Store) -> Tally:
    return Tally(stream_of(store))


@pytest.fixture
def capacity() -> int:
    return 100_000


@pytest.fixture
def budget(capacity: int) -> TenantBudget:
    return TenantBudget(capacity, 0.001)


@pytest.fixture
async def app(
    settings: Settings, store: Store, kind: str, tally: Tally, budget: TenantBudget, capacity: int
) -> AsyncIterator[Starlette]:
    poll = 0.01 if kind == "embedded" else 0.05
    built = spec_app(
        replace(settings, stream_poll_interval=poll),
        store,
        tally,
        budget=budget,
        max_cost=min(capacity, 100),
    )
    async with built.router.lifespan_context(built):
        yield built


async def a_cursor_then_others(
    connect: Connect, acme: Api, store: Store, kind: str
) -> tuple[str, str]:
    """Bob's id and a cursor of his; then another tenant's records, and one more rename."""
    bob = await acme.create_user("bob@acme.test", "Bob")
    await caught_up(kind)
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", RESUME, {"id": bob["id"]})
        await caught_up(kind)
        renamed = await acme(RENAME, {"id": bob["id"], "v": bob["version"], "name": "Rob"})
        cursor = (await event(ws))["data"]["userChanged"]["cursor"]
    for n in range(OTHERS):
        await store.put(Put({"PK": f"T#globex#USER#g{n}", "SK": "PROFILE", "_type": "X"}))
    version = renamed["data"]["updateUser"]["version"]
    await acme(RENAME, {"id": bob["id"], "v": version, "name": "Robert"})
    await caught_up(kind)
    return bob["id"], cursor


async def test_a_replay_reads_its_tenant_and_pays_for_what_it_reads(
    app: Starlette,
    connect: Connect,
    acme: Api,
    store: Store,
    kind: str,
    tally: Tally,
    budget: TenantBudget,
) -> None:
    bob, cursor = await a_cursor_then_others(connect, acme, store, kind)
    before = budget.remaining("acme")
    tally.reset()
    async with connect(acme.token) as ws:
        await subscribe(ws, "2", RESUME, {"id": bob, "after": cursor})
        replayed = (await event(ws, "2"))["data"]["userChanged"]
        assert (replayed["change"], replayed["user"]) == ("UPDATED", {"name": "Robert"})
        await settle()
    assert tally.reads >= 1
    assert all(key.startswith("T#acme#") for key in tally.handed)  # never another tenant's
    if kind == "embedded":
        assert tally.skipped == 0  # left out in SQL, never decoded
    else:
        assert tally.skipped >= OTHERS  # read, not decoded, and paid for
    spent = before - budget.remaining("acme")  # a point a read, and one a record decoded
    assert spent == pytest.approx(tally.reads + len(tally.handed) + tally.skipped, abs=0.5)


@pytest.mark.parametrize("capacity", [100])
async def test_a_replay_past_the_budget_ends_throttled(
    app: Starlette,
    connect: Connect,
    acme: Api,
    store: Store,
    kind: str,
    tally: Tally,
    budget: TenantBudget,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(changes, "SCAN_WINDOW", 2)  # many reads over the other tenant's
    bob, cursor = await a_cursor_then_others(connect, acme, store, kind)
    budget.take("acme", budget.remaining("acme") - 20)  # 20 points left
    async with connect(acme.token) as ws:
        await subscribe(ws, "2", RESUME, {"id": bob, "after": cursor})
        message = await receive(ws)
        assert message["type"] == "error", message
        (error,) = message["payload"]
        assert error["extensions"]["code"] == "THROTTLED", error
        assert error["extensions"]["retryAfter"] >= 1
    # what it read beyond its 20 points is one read at most, the one it could not pay for
    assert tally.reads + len(tally.handed) + tally.skipped <= 20 + 1 + REPLAY_READ

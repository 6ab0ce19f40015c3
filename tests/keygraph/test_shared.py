"""Budgets and places shared through a real redis-server (keygraph/shared/): two holders of
one tenant's bucket admit its budget once between them, not once each; places count every
holder's, and a dead holder's come back when its lease runs out; with Redis killed each
holder falls back to its own bucket (counted, logged once), and shares again once Redis is
back."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

import pytest
import redis

from keygraph.serve.budget import TenantBudget
from keygraph.shared.bucket import SharedBudget
from keygraph.shared.link import Link
from keygraph.shared.places import SharedPlaces
from tests.redis_server import RedisServer
from tests.waiting import POLL, UNTIL_SECONDS, until

PREFIX = "keygraph:test:"
Holders = Callable[[], tuple[Link, SharedBudget, SharedPlaces]]


@pytest.fixture
async def holder(redis_server: RedisServer) -> AsyncIterator[Holders]:
    """Makes holders (a worker each) of a 100-point bucket that barely refills, each with
    its own 100-point bucket to fall back on; closes them at the end."""
    made: list[tuple[Link, SharedBudget, SharedPlaces]] = []
    fallbacks: list[str] = []

    def make() -> tuple[Link, SharedBudget, SharedPlaces]:
        link = Link(redis_server.url, fell_back=fallbacks.append, probe_every=0.05)
        budget = SharedBudget(link, PREFIX, 100, 0.001, TenantBudget(100, 0.001))
        made.append((link, budget, SharedPlaces(link, PREFIX, lease=0.3)))
        return made[-1]

    yield make
    for link, budget, places in made:
        await budget.close()
        await places.close()
        await link.close()


async def test_two_holders_admit_a_tenants_budget_once(holder: Holders) -> None:
    (_, a, _), (_, b, _) = holder(), holder()
    assert (await a.admit("acme", 60)).admitted
    refused = await b.admit("acme", 60)
    assert not refused.admitted
    assert refused.remaining == pytest.approx(40, abs=0.1)
    assert (await b.admit("acme", 40)).admitted
    assert not (await a.admit("acme", 1)).admitted
    assert (await a.admit("globex", 100)).admitted  # another tenant has its own bucket


async def test_concurrent_admits_on_two_holders_take_the_budget_once(holder: Holders) -> None:
    (_, a, _), (_, b, _) = holder(), holder()
    admissions = await asyncio.gather(*(h.admit("acme", 10) for h in (a, b) * 10))
    assert sum(admission.admitted for admission in admissions) == 10


async def test_what_a_holder_takes_and_gives_back_reaches_the_others(holder: Holders) -> None:
    (_, a, _), (_, b, _) = holder(), holder()
    assert (await a.admit("acme", 10)).admitted
    assert a.take("acme", 50).admitted  # a subscription's events, on a's view
    await until(lambda: a._sending is None, "the points sent to Redis")
    assert not (await b.admit("acme", 41)).admitted
    a.refund("acme", 30)
    await until(lambda: a._sending is None, "the refund sent to Redis")
    assert (await b.admit("acme", 70)).admitted


async def test_places_count_every_holders_and_a_dead_ones_come_back(
    holder: Holders, redis_server: RedisServer
) -> None:
    (_, _, a), (_, _, b), (_, _, dead) = holder(), holder(), holder()
    assert await a.take("connections", "acme", 3)
    assert await dead.take("connections", "acme", 3)
    assert await b.take("connections", "acme", 3)
    assert not await b.take("connections", "acme", 3)
    assert await b.take("subscriptions", "acme", 3)  # another kind, counted apart
    a.release("connections", "acme")
    await until(lambda: a._writing is None, "the release sent to Redis")
    assert await b.take("connections", "acme", 3)
    assert not await b.take("connections", "acme", 3)
    a.start()
    b.start()  # both renew their leases; `dead` never does, and its place comes back
    lease = redis.Redis.from_url(redis_server.url)
    try:
        gone = f"{PREFIX}holder:{dead.holder}"
        await until(lambda: not lease.exists(gone), "the dead holder's lease to run out")
    finally:
        lease.close()
    assert await b.take("connections", "acme", 3)
    assert not await a.take("connections", "acme", 3)


async def test_a_holder_falls_back_while_redis_is_down_and_shares_again(
    holder: Holders, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "keygraph.shared")
    (link, a, places), (_, b, _) = holder(), holder()
    assert (await a.admit("acme", 100)).admitted
    redis_server.kill()
    for _ in range(3):  # the holder's own bucket, untouched so far
        assert (await a.admit("acme", 30)).admitted
    assert not link.up
    assert await places.take("connections", "acme", 1)  # the worker's own limit decides
    down = [r for r in caplog.records if "cannot be reached" in r.getMessage()]
    assert len(down) == 1  # once for the outage, not once a call
    redis_server.start()  # empty: every bucket full again
    async with asyncio.timeout(UNTIL_SECONDS):
        while not link.up:  # a call each probe tries Redis again
            await a.admit("globex", 1)
            await asyncio.sleep(POLL)
    assert (await a.admit("acme", 100)).admitted
    assert not (await b.admit("acme", 1)).admitted  # shared again
    assert any("answers again" in r.getMessage() for r in caplog.records)

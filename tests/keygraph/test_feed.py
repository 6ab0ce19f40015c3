"""A subscription's feed: changes in the order offered, waiting when there is none, and
lost once its subscriber falls too far behind."""

from __future__ import annotations

import asyncio

import pytest

from keygraph.realtime import feed as feeds
from keygraph.realtime.changes import Change
from keygraph.realtime.feed import Feed


def change(sequence: int) -> Change:
    return Change("acme", "USER", "UPDATED", None, "shard-0", str(sequence))


async def test_changes_come_in_order_and_next_waits_for_one() -> None:
    feed = Feed("acme", ("user", "u1"))
    waiting = asyncio.ensure_future(feed.next())
    await asyncio.sleep(0)
    assert not waiting.done()
    feed.offer(change(1))
    feed.offer(change(2))
    assert (await waiting).sequence == "1"  # type: ignore[union-attr]
    assert (await feed.next()).sequence == "2"  # type: ignore[union-attr]


async def test_a_feed_too_far_behind_is_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feeds, "MAX_QUEUED", 2)
    feed = Feed("acme", ("user", "u1"))
    for sequence in range(5):
        feed.offer(change(sequence))
    assert feed.lost
    got = [await feed.next() for _ in range(3)]
    assert [c.sequence if c else None for c in got] == ["0", "1", None]

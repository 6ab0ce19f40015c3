"""Resuming with `after: <cursor>` on a stream with several shards open side by side, as on
DynamoDB Streams: a subscription whose topic spans several items gets, after its cursor,
exactly the events it missed on every shard (one split, or opened, while it was away; one
trimmed), then live ones, none twice."""

from __future__ import annotations

from typing import Any

import pytest
from httpx_ws import AsyncWebSocketSession

from tests.server.conftest import Api
from tests.server.realtime.conftest import Connect, receive, settle, subscribe
from tests.server.realtime.memory_stream import MemoryStream
from tests.server.realtime.test_fields import ORDERS, event, nothing_more
from tests.server.realtime.test_resume import sku_of, skus


@pytest.fixture
def stream() -> MemoryStream:
    return MemoryStream(lanes=3)


async def order(api: Api, stream: MemoryStream, user: dict[str, Any], sku: str, lane: int) -> None:
    """Creates the order `sku`, its change on the shard of `lane`."""
    stream.lane = lane
    await api.create_order(user["id"], [(sku, 1, 100)])
    await settle()


async def taken(ws: AsyncWebSocketSession, count: int) -> tuple[list[str], str]:
    """The next `count` events' skus, and the cursor of the last."""
    payloads = [await event(ws) for _ in range(count)]
    return [sku_of(p) for p in payloads], payloads[-1]["data"]["orderChanged"]["cursor"]


async def test_a_resume_gets_what_every_shard_got_after_its_cursor_then_live_events(
    connect: Connect, acme: Api, stream: MemoryStream
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await settle()
        for sku, lane in [("A", 0), ("B", 1), ("C", 2), ("D", 0)]:
            await order(acme, stream, bob, sku, lane)
        seen, cursor = await taken(ws, 3)
        assert seen == ["A", "B", "C"]
    for sku, lane in [("E", 0), ("F", 1), ("G", 2)]:
        await order(acme, stream, bob, sku, lane)
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor})
        assert sorted(await skus(ws, 4)) == ["D", "E", "F", "G"]
        await order(acme, stream, bob, "H", 1)
        assert await skus(ws, 1) == ["H"]
        await nothing_more(ws)


async def test_a_resume_follows_a_shard_split_and_one_opened_while_away(
    connect: Connect, acme: Api, stream: MemoryStream
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await settle()
        await order(acme, stream, bob, "A", 0)
        await order(acme, stream, bob, "B", 1)
        _, cursor = await taken(ws, 2)
    await order(acme, stream, bob, "C", 0)
    stream.split(0)
    await order(acme, stream, bob, "D", 0)
    await order(acme, stream, bob, "E", 2)
    stream.add_lane()
    await order(acme, stream, bob, "F", 3)
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor})
        got = await skus(ws, 4)
        assert sorted(got) == ["C", "D", "E", "F"]
        assert got.index("C") < got.index("D")
        stream.split(1)
        await order(acme, stream, bob, "G", 1)
        assert await skus(ws, 1) == ["G"]
        await nothing_more(ws)


async def test_a_trimmed_shard_is_told_and_replays_from_its_oldest_the_others_after_the_cursor(
    connect: Connect, acme: Api, stream: MemoryStream
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await settle()
        await order(acme, stream, bob, "A", 0)
        await order(acme, stream, bob, "B", 1)
        _, cursor = await taken(ws, 2)
    await order(acme, stream, bob, "C", 0)
    await order(acme, stream, bob, "D", 1)
    stream.trim(0)
    await order(acme, stream, bob, "E", 0)
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor})
        notice = await receive(ws)
        assert notice["payload"]["errors"][0]["extensions"]["code"] == "EVENTS_TRIMMED"
        assert sorted(await skus(ws, 2)) == ["D", "E"]
        await nothing_more(ws)


async def test_the_cursors_of_replayed_and_then_live_events_resume_exactly(
    connect: Connect, acme: Api, stream: MemoryStream
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await settle()
        await order(acme, stream, bob, "A", 0)
        _, cursor = await taken(ws, 1)
    for sku, lane in [("B", 1), ("C", 2), ("D", 0)]:
        await order(acme, stream, bob, sku, lane)
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor})
        replayed, first = await taken(ws, 1)
        rest, _ = await taken(ws, 2)
        assert sorted(replayed + rest) == ["B", "C", "D"]
        await order(acme, stream, bob, "E", 1)
        assert (await taken(ws, 1))[0] == ["E"]
        await order(acme, stream, bob, "F", 2)
        _, live = await taken(ws, 1)
    await order(acme, stream, bob, "G", 0)
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": live})
        assert await skus(ws, 1) == ["G"]
        await nothing_more(ws)
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": first})
        assert sorted(await skus(ws, 5)) == sorted([*rest, "E", "F", "G"])
        await nothing_more(ws)

"""Resuming with `after: <cursor>` on a test double of a stream: across a shard's children;
after trimming; cursors that are not the subscriber's; a replay the store cannot serve.
(What was missed, then live events, none repeated at the seam, is tested per field on
both stores' own streams: test_fields_on_streams.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from httpx_ws import AsyncWebSocketSession

from keygraph.errors import StoreError
from keygraph.streams import Batch
from tests.server.conftest import Api
from tests.server.realtime.conftest import Connect, receive, settle, subscribe
from tests.server.realtime.memory_stream import MemoryStream
from tests.server.realtime.test_fields import ORDERS, event


def sku_of(payload: dict[str, Any]) -> str:
    sku: str = payload["data"]["orderChanged"]["order"]["items"][0]["sku"]
    return sku


async def skus(ws: AsyncWebSocketSession, count: int) -> list[str]:
    return [sku_of(await event(ws)) for _ in range(count)]


async def first_cursor(connect: Connect, api: Api, user_id: str, sku: str) -> str:
    """The cursor of the order `sku` a subscriber saw before it went away."""
    async with connect(api.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": user_id})
        await settle()
        await api.create_order(user_id, [(sku, 1, 100)])
        cursor: str = (await event(ws))["data"]["orderChanged"]["cursor"]
    return cursor


async def test_resuming_follows_a_shard_into_its_child(
    connect: Connect, acme: Api, stream: MemoryStream
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    cursor = await first_cursor(connect, acme, bob["id"], "A")
    await acme.create_order(bob["id"], [("B", 1, 100)])
    stream.split()
    await acme.create_order(bob["id"], [("C", 1, 100)])
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor})
        assert await skus(ws, 2) == ["B", "C"]


async def test_live_events_follow_a_shard_into_its_child(
    connect: Connect, acme: Api, stream: MemoryStream
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await settle()
        await acme.create_order(bob["id"], [("A", 1, 100)])
        stream.split()
        await acme.create_order(bob["id"], [("B", 1, 100)])
        stream.split()
        await acme.create_order(bob["id"], [("C", 1, 100)])
        assert await skus(ws, 3) == ["A", "B", "C"]


async def test_a_cursor_past_the_retention_is_told_then_replays_the_oldest(
    connect: Connect, acme: Api, stream: MemoryStream
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    cursor = await first_cursor(connect, acme, bob["id"], "A")
    stream.split()
    stream.trim()
    await acme.create_order(bob["id"], [("B", 1, 100)])
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor})
        notice = await receive(ws)
        assert notice["type"] == "next"
        assert notice["payload"]["errors"][0]["extensions"]["code"] == "EVENTS_TRIMMED"
        assert await skus(ws, 1) == ["B"]


async def test_an_edited_cursor_is_invalid(connect: Connect, acme: Api) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    cursor = await first_cursor(connect, acme, bob["id"], "A")
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor[:-2] + "xx"})
        message = await receive(ws)
        assert message["type"] == "error"
        assert message["payload"][0]["extensions"]["code"] == "INVALID_CURSOR"


async def test_another_tenants_cursor_is_invalid(connect: Connect, acme: Api, globex: Api) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    cursor = await first_cursor(connect, acme, bob["id"], "A")
    async with connect(globex.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor})
        message = await receive(ws)
        assert message["type"] == "error"
        assert message["payload"][0]["extensions"]["code"] == "INVALID_CURSOR"


async def test_a_replay_the_store_cannot_serve_ends_with_store_unavailable(
    connect: Connect, acme: Api, stream: MemoryStream, monkeypatch: pytest.MonkeyPatch
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    cursor = await first_cursor(connect, acme, bob["id"], "A")

    async def unavailable(*_args: object, **_kwargs: object) -> Batch:
        raise StoreError("the change log cannot be read")

    async with connect(acme.token) as ws:
        monkeypatch.setattr(stream, "read", unavailable)
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor})
        message = await receive(ws)
        assert message["type"] == "error"
        assert message["payload"][0]["extensions"]["code"] == "STORE_UNAVAILABLE"
        await ws.send_json({"type": "ping"})
        assert await receive(ws) == {"type": "pong"}

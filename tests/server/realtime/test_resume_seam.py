"""The seam of a resume, with a reader slow enough that what the replay sends is also read
live after the subscription starts: each event is sent once."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from server.settings import Settings
from tests.server.conftest import Api
from tests.server.realtime.conftest import Connect, subscribe
from tests.server.realtime.test_fields import ORDERS, nothing_more
from tests.server.realtime.test_resume import first_cursor, skus

POLL = 0.3


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(settings, stream_poll_interval=POLL)


async def test_events_replayed_and_read_live_are_sent_once(connect: Connect, acme: Api) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await asyncio.sleep(2 * POLL)
    cursor = await first_cursor(connect, acme, bob["id"], "A")
    for sku in ("B", "C"):
        await acme.create_order(bob["id"], [(sku, 1, 100)])
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor})
        assert await skus(ws, 2) == ["B", "C"]
        await asyncio.sleep(2 * POLL)  # the reader has read B and C since
        await acme.create_order(bob["id"], [("D", 1, 100)])
        assert await skus(ws, 1) == ["D"]
        await nothing_more(ws)

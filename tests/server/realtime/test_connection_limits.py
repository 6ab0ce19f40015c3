"""The WebSocket connections a worker holds: in all, and awaiting `connection_init` (a flood
of those pushes out its own oldest, not the clients that init), counted down on every way a
connection ends."""

from __future__ import annotations

import asyncio
import contextlib
import random
from pathlib import Path

import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect

from server.edge.app import App
from server.realtime.limits import ConnectionLimits
from server.settings import Settings
from tests.server.conftest import SECRET, Api
from tests.server.realtime.conftest import Sockets, bearer, realtime_of, receive, settle, subscribe

USER = "subscription($id: ID!) { userChanged(id: $id) { change user { name } } }"


@pytest.fixture
def app(hand_app: App) -> App:
    """The hand-written server alone: these are its own connection limits."""
    return hand_app


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path,
        jwt_secret=SECRET,
        ws_init_timeout=0.5,
        stream_poll_interval=0.01,
        max_ws_connections=12,
        max_ws_awaiting_init=4,
    ).resolved()


def connections(app: App) -> ConnectionLimits:
    return realtime_of(app).connections


async def closed_with(ws: AsyncWebSocketSession, code: int) -> None:
    with pytest.raises(WebSocketDisconnect) as caught:
        await receive(ws)
    assert caught.value.code == code


async def still_open(ws: AsyncWebSocketSession) -> None:
    """`ws` is open and not yet initialised: it is closed 4408 at the init timeout."""
    await closed_with(ws, 4408)


async def counted_down(limits: ConnectionLimits) -> None:
    await counted_down_to(limits, 0)


async def counted_down_to(limits: ConnectionLimits, open_: int) -> None:
    """Waits for the worker to count `open_` connections open, none awaiting init."""
    for _ in range(200):
        if limits.open == open_ and limits.awaiting_init == 0:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{limits.open} open, {limits.awaiting_init} awaiting init")


async def test_connections_past_the_worker_limit_are_closed_1013(
    app: App, sockets: Sockets, acme_token: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with sockets() as open_session:
        held = [await open_session(acme_token) for _ in range(12)]
        refused = await open_session()
        await closed_with(refused, 1013)
        assert connections(app).open == 12
        await held[0].send_text("not json")
        await closed_with(held[0], 4400)
        again = await open_session(acme_token)  # a place freed is taken again
        await again.send_json({"type": "ping"})
        assert await receive(again) == {"type": "pong"}
    warnings = [r for r in caplog.records if "holds 12 connections" in r.getMessage()]
    assert [(r.levelname, r.exc_info) for r in warnings] == [("WARNING", None)]


async def test_a_flood_awaiting_init_does_not_keep_a_client_out(
    app: App, sockets: Sockets, acme: Api, acme_token: str, caplog: pytest.LogCaptureFixture
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    limits = connections(app)
    async with sockets() as open_session:
        flood = [await open_session() for _ in range(10)]
        client = await open_session(acme_token)  # its init comes before the next flood
        flood += [await open_session() for _ in range(10)]
        assert (limits.awaiting_init, limits.open) == (4, 5)
        await subscribe(client, "1", USER, {"id": bob["id"]})
        await settle()
        await acme.data(
            "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id } }",
            {"i": {"id": bob["id"], "expectedVersion": bob["version"], "name": "Robert"}},
        )
        message = await receive(client)
        assert message["payload"]["data"]["userChanged"]["user"] == {"name": "Robert"}
        for ws in flood[:16]:
            await closed_with(ws, 1013)  # the oldest of the flood made room
        for ws in flood[16:]:
            await still_open(ws)
    evicted = [r for r in caplog.records if "newer ones await their init" in r.getMessage()]
    assert len(evicted) == 16
    assert {(r.levelname, r.exc_info) for r in evicted} == {("WARNING", None)}
    await counted_down(limits)


async def test_every_way_a_connection_ends_counts_it_down(
    app: App, sockets: Sockets, acme_token: str
) -> None:
    limits = connections(app)
    for _ in range(3):
        async with sockets() as open_session:  # all dropped at once at the block's end
            bad = [await open_session() for _ in range(3)]
            await bad[0].send_text("not json")
            await bad[1].send_bytes(b"\x00")
            for ws in bad[:2]:
                await closed_with(ws, 4400)
            await bad[2].send_json({"type": "connection_init", "payload": bearer("forged")})
            await closed_with(bad[2], 4403)
            late = await open_session()
            for _ in range(4):
                ws = await open_session(acme_token)
                await subscribe(ws, "1", USER, {"id": "VXNlcjp4"})
            waiting = [await open_session() for _ in range(3)]
            await settle()
            assert (limits.open, limits.awaiting_init) == (8, 4)
            for ws in [late, *waiting]:
                await still_open(ws)  # timed out
            assert (limits.open, limits.awaiting_init) == (4, 0)
            for _ in range(2):
                await open_session()  # dropped awaiting init
        await counted_down(limits)


async def test_connections_opened_and_dropped_at_once_are_all_counted_down(
    app: App, sockets: Sockets, acme_token: str
) -> None:
    limits = connections(app)
    most = {"open": 0, "awaiting init": 0}
    acknowledged = []

    async def client(n: int) -> None:
        await asyncio.sleep(random.Random(-n).uniform(0, 0.1))
        with contextlib.suppress(WebSocketDisconnect, ExceptionGroup):  # refused, evicted
            async with sockets() as open_session:  # its own transport, in its own task
                ws = await open_session(acme_token if n % 3 == 0 else None)
                most["open"] = max(most["open"], limits.open)
                most["awaiting init"] = max(most["awaiting init"], limits.awaiting_init)
                if n % 3 == 0:
                    acknowledged.append(n)
                elif n % 3 == 1:
                    await ws.send_text("not json")
                if n % 5 == 0:
                    await subscribe(ws, "1", USER, {"id": "VXNlcjp4"})
                await asyncio.sleep(random.Random(n).uniform(0, 0.05))

    await asyncio.gather(*(client(n) for n in range(60)))
    assert most["open"] <= 12
    assert most["awaiting init"] <= 4
    assert acknowledged
    await counted_down(limits)


async def test_a_client_connects_and_gets_its_event_during_a_flood(
    app: App, sockets: Sockets, acme: Api, acme_token: str
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    limits = connections(app)
    done, past_the_limit = asyncio.Event(), asyncio.Event()
    opened = []

    async def flood() -> None:  # a few hundred connections a second that never init
        async with sockets() as open_session:
            while not done.is_set():
                opened.append(await open_session())
                assert limits.awaiting_init <= 4
                if len(opened) > 8:
                    past_the_limit.set()
                await asyncio.sleep(0.002)

    flooder = asyncio.create_task(flood())
    await past_the_limit.wait()
    async with sockets() as open_session:
        client = await open_session(acme_token)
        flooded = len(opened)
        await subscribe(client, "1", USER, {"id": bob["id"]})
        await settle()
        await acme.data(
            "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id } }",
            {"i": {"id": bob["id"], "expectedVersion": bob["version"], "name": "Robert"}},
        )
        message = await receive(client)
        assert message["payload"]["data"]["userChanged"]["user"] == {"name": "Robert"}
        assert len(opened) > flooded + 4  # the flood went on meanwhile
    done.set()
    await flooder
    await counted_down(limits)

"""The WebSocket connections a worker holds for each tenant (keygraph/serve/sockets.py's
places): past its limit a tenant's connection is closed 4429 as it inits, others' go on; a
connection takes a place only once initialised, so a flood that never inits keeps no
client out; and a place is given back on every way a connection ends."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from typing import cast

import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect
from starlette.applications import Starlette

from keygraph.serve.sockets import Places
from keygraph.serve.subscription_limits import SubscriptionLimits
from keygraph.store import Store
from keygraph.stores.embedded.store import EmbeddedStore
from server.settings import Settings
from tests.server.conftest import Api
from tests.server.realtime.capturing_store import CapturingStore
from tests.server.realtime.conftest import (
    Sockets,
    bearer,
    receive,
    settle,
    spec_app,
    subscribe,
)
from tests.server.realtime.memory_stream import MemoryStream
from tests.waiting import until

USER = "subscription($id: ID!) { userChanged(id: $id) { change user { name } } }"
PLACES = 4
"""Connections one tenant may hold in the worker."""


@pytest.fixture
async def app(
    settings: Settings, store: EmbeddedStore, stream: MemoryStream
) -> AsyncIterator[Starlette]:
    built = spec_app(
        settings, cast(Store, CapturingStore(store, stream)), stream, max_connections=PLACES
    )
    async with built.router.lifespan_context(built):
        yield built


def places(app: Starlette) -> Places:
    held: Places = app.state.places
    return held


def subscriptions(app: Starlette) -> SubscriptionLimits:
    limits: SubscriptionLimits = app.state.subscriptions
    return limits


async def closed_with(ws: AsyncWebSocketSession, code: int) -> None:
    with pytest.raises(WebSocketDisconnect) as caught:
        await receive(ws)
    assert caught.value.code == code


async def counted_down(app: Starlette) -> None:
    """Waits for the worker to hold no connection's place and no subscription."""
    await until(
        lambda: places(app).held == {} and subscriptions(app).held() == (0, {}),
        "every place to be given back",
    )


async def init(ws: AsyncWebSocketSession, token: str) -> None:
    await ws.send_json({"type": "connection_init", "payload": bearer(token)})


async def test_a_tenants_connections_past_its_limit_are_closed_4429(
    app: Starlette, sockets: Sockets, acme_token: str, globex_token: str
) -> None:
    async with sockets() as open_session:
        held = [await open_session(acme_token) for _ in range(PLACES)]
        refused = await open_session()
        await init(refused, acme_token)
        await closed_with(refused, 4429)
        other = await open_session(globex_token)  # another tenant's places are its own
        assert places(app).held == {"acme": PLACES, "globex": 1}
        await held[0].send_text("not json")
        await closed_with(held[0], 4400)
        await until(lambda: places(app).held["acme"] == PLACES - 1, "the place to be given back")
        again = await open_session(acme_token)  # a place freed is taken again
        for ws in (again, other):
            await ws.send_json({"type": "ping"})
            assert await receive(ws) == {"type": "pong"}
    await counted_down(app)


async def test_every_way_a_connection_ends_counts_it_down(
    app: Starlette, sockets: Sockets, acme_token: str
) -> None:
    for _ in range(3):
        async with sockets() as open_session:  # all dropped at once at the block's end
            bad = [await open_session(acme_token) for _ in range(3)]
            await bad[0].send_text("not json")
            await bad[1].send_bytes(b"\x00")
            await init(bad[2], acme_token)  # a second init
            for ws, code in zip(bad, (4400, 4400, 4429), strict=True):
                await closed_with(ws, code)
            forged = await open_session()
            await init(forged, "forged")
            await closed_with(forged, 4403)
            late = await open_session()
            for _ in range(PLACES):
                ws = await open_session(acme_token)
                await subscribe(ws, "1", USER, {"id": "VXNlcjp4"})
            await until(
                lambda: subscriptions(app).held() == (PLACES, {"acme": PLACES}),
                "the subscriptions to be held",
            )
            assert places(app).held == {"acme": PLACES}
            await closed_with(late, 4408)  # timed out, never placed
            for _ in range(2):
                await open_session()  # dropped awaiting init
        await counted_down(app)


async def test_connections_opened_and_dropped_at_once_are_all_counted_down(
    app: Starlette, sockets: Sockets, acme_token: str
) -> None:
    most = 0
    acknowledged = []

    async def client(n: int) -> None:
        nonlocal most
        await asyncio.sleep(random.Random(-n).uniform(0, 0.1))
        with contextlib.suppress(WebSocketDisconnect, ExceptionGroup):  # refused, closed
            async with sockets() as open_session:  # its own transport, in its own task
                ws = await open_session()
                if n % 3 == 1:
                    await ws.send_text("not json")
                else:
                    await init(ws, acme_token)
                    if (await receive(ws))["type"] == "connection_ack":
                        acknowledged.append(n)
                        most = max(most, places(app).held.get("acme", 0))
                        if n % 5 == 0:
                            await subscribe(ws, "1", USER, {"id": "VXNlcjp4"})
                await asyncio.sleep(random.Random(n).uniform(0, 0.05))

    await asyncio.gather(*(client(n) for n in range(60)))
    assert acknowledged
    assert 0 < most <= PLACES
    await counted_down(app)


async def test_a_client_connects_and_gets_its_event_during_a_flood(
    app: Starlette, sockets: Sockets, acme: Api, acme_token: str
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    done, past_the_limit = asyncio.Event(), asyncio.Event()
    opened = []

    async def flood() -> None:  # a few hundred connections a second that never init
        async with sockets() as open_session:
            while not done.is_set():
                opened.append(await open_session())
                if len(opened) > 2 * PLACES:
                    past_the_limit.set()
                await asyncio.sleep(0.002)

    flooder = asyncio.create_task(flood())
    await past_the_limit.wait()
    async with sockets() as open_session:
        client = await open_session(acme_token)
        flooded = len(opened)
        assert places(app).held == {"acme": 1}  # the flood holds no place
        await subscribe(client, "1", USER, {"id": bob["id"]})
        await settle()
        await acme.data(
            "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id } }",
            {"i": {"id": bob["id"], "expectedVersion": bob["version"], "name": "Robert"}},
        )
        message = await receive(client)
        assert message["payload"]["data"]["userChanged"]["user"] == {"name": "Robert"}
        assert len(opened) > flooded + PLACES  # the flood went on meanwhile
    done.set()
    await flooder
    await counted_down(app)

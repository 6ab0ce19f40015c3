"""The subscriptions a tenant and a process hold at once in `keygraph serve` (the social
case, Served.subscriptions): a subscribe past either is an `error` with code
SUBSCRIPTION_LIMIT, the connection and its other subscriptions going on; a place comes back
when its subscription completes, when the client stops it and when its connection drops;
and subscribes sent at once on several connections never take more places than there are."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect
from starlette.applications import Starlette

from keygraph import writes
from keygraph.api import Extension, changes
from keygraph.serve import create_app
from keygraph.serve.package import served
from keygraph.serve.served import Served
from keygraph.serve.subscription_limits import SubscriptionLimits
from keygraph.serve.subscription_settings import SubscriptionSettings
from keygraph.store import Session
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, CODEC, Compiled
from tests.keygraph.api.ws_sockets import Open, sockets
from tests.waiting import until

SPEC = CASES / "social" / "spec.toml"
SECRET = "subscription-limits-" + "s" * 32
WATCH = "subscription($id: ID!) { memberChanged(memberId: $id) { kind } }"
NEXT = "subscription($id: ID!) { nextMemberChange(memberId: $id) { kind } }"
SDL = """
"A change's kind, alone."
type NextChange {
  kind: ChangeKind!
}

extend type Subscription {
  "The next change to a member's profile, then the subscription completes."
  nextMemberChange(memberId: ID!): NextChange!
}
"""


def extension() -> Extension:
    """A subscription that ends by itself, after one change."""
    extended = Extension(SDL)

    @extended.field("Subscription.nextMemberChange", public=True, follows="memberChanged")
    async def next_member_change(
        _root: Any, info: Any, member_id: str
    ) -> AsyncIterator[dict[str, Any]]:
        async for change in changes(info, None, memberChanged={"member_id": member_id}):
            yield {"kind": change.kind}
            return

    return extended


@dataclass
class Limited:
    """The app under test, with few places, and the Member's writes."""

    served: Served
    app: Starlette
    members: writes.Writes

    @property
    def limits(self) -> SubscriptionLimits:
        limits: SubscriptionLimits = self.app.state.subscriptions
        return limits

    def feeds(self, count: int) -> Callable[[], bool]:
        assert self.served.realtime is not None
        hub = self.served.realtime.hub
        return lambda: hub.open_feeds == count

    async def create(self, tenant: str, member_id: str) -> None:
        session = Session(self.served.store, CODEC)
        values = {"member_id": member_id, "handle": member_id, "name": "N"}
        await writes.create(session, tenant, self.members, values)

    @contextlib.asynccontextmanager
    async def sockets(self) -> AsyncIterator[Open]:
        """`await open(tenant)`: a socket on one transport, closed when the block ends."""
        async with sockets(self.app, SECRET) as open_socket:
            yield open_socket


@pytest.fixture
async def limited(
    compiled: Callable[[Path], Compiled], store_factory: StoreFactory
) -> AsyncIterator[Limited]:
    """A tenant holds at most 2 subscriptions, the process 3 (a connection 20)."""
    package = compiled(SPEC)
    store = await store_factory("embedded", package.table)
    few = SubscriptionSettings(max_subscriptions_per_tenant=2, max_subscriptions_per_worker=3)
    app_served = served(package.package.__name__, store, SECRET, [extension()], subscriptions=few)
    built = create_app(app_served)
    members = package.module("api").API.writes["Member"]
    async with built.router.lifespan_context(built):
        yield Limited(app_served, built, members)


async def subscribe(ws: AsyncWebSocketSession, ident: str, member: str, query: str = WATCH) -> None:
    payload = {"query": query, "variables": {"id": member}}
    await ws.send_json({"type": "subscribe", "id": ident, "payload": payload})


async def taken(ws: AsyncWebSocketSession, ident: str, member: str, query: str = WATCH) -> None:
    """Subscribes, and asserts nothing refused it: the ping sent after is answered first
    (a socket's messages are answered in order)."""
    await subscribe(ws, ident, member, query)
    await ws.send_json({"type": "ping"})
    assert await ws.receive_json(timeout=15) == {"type": "pong"}


async def refused(ws: AsyncWebSocketSession, ident: str, member: str, why: str) -> None:
    """Subscribes, and asserts the subscription is refused for the limit `why` names."""
    await subscribe(ws, ident, member)
    message = await ws.receive_json(timeout=15)
    assert (message["type"], message["id"]) == ("error", ident), message
    (error,) = message["payload"]
    assert error["extensions"]["code"] == "SUBSCRIPTION_LIMIT"
    assert why in error["message"]


async def test_a_tenant_and_the_process_hold_at_most_their_subscriptions(
    limited: Limited,
) -> None:
    async with limited.sockets() as open_socket:
        first, second, other = [await open_socket(t) for t in ("acme", "acme", "globex")]
        await taken(first, "a", "m1")
        await taken(first, "b", "m2")
        await refused(second, "c", "m3", "tenant")  # on another connection too
        await taken(other, "x", "m1")  # another tenant's places are its own
        await refused(other, "y", "m2", "server")  # the process holds its most
        assert limited.limits.held() == (3, {"acme": 2, "globex": 1})
        await until(limited.feeds(3), "the three subscriptions' feeds")
        await limited.create("acme", "m1")  # the refused ones' connections go on
        message = await first.receive_json(timeout=20)
        assert (message["type"], message["id"]) == ("next", "a")
        assert message["payload"]["data"] == {"memberChanged": {"kind": "CREATED"}}


async def test_a_place_comes_back_when_its_subscription_completes(limited: Limited) -> None:
    async with limited.sockets() as open_socket:
        ws = await open_socket()
        await taken(ws, "next", "m1", NEXT)
        await taken(ws, "a", "m2")
        await refused(ws, "b", "m3", "tenant")
        await until(limited.feeds(2), "both feeds")
        await limited.create("acme", "m1")
        message = await ws.receive_json(timeout=20)
        assert (message["id"], message["payload"]) == (
            "next",
            {"data": {"nextMemberChange": {"kind": "CREATED"}}},
        )
        assert await ws.receive_json(timeout=15) == {"type": "complete", "id": "next"}
        await until(lambda: limited.limits.held() == (1, {"acme": 1}), "the place back")
        await taken(ws, "b", "m3")


async def test_a_place_comes_back_when_the_client_stops_its_subscription(
    limited: Limited,
) -> None:
    async with limited.sockets() as open_socket:
        ws = await open_socket()
        await taken(ws, "a", "m1")
        await taken(ws, "b", "m2")
        await refused(ws, "c", "m3", "tenant")
        await ws.send_json({"type": "complete", "id": "a"})
        await taken(ws, "c", "m3")  # at once: the place is back before the next message
        await refused(ws, "d", "m4", "tenant")
        assert limited.limits.held() == (2, {"acme": 2})
        await until(limited.feeds(2), "a's feed closed, c's open")


async def test_places_come_back_when_their_connection_drops(limited: Limited) -> None:
    async with limited.sockets() as open_socket:  # the client closes both at the end
        dropped, other = await open_socket(), await open_socket()
        await taken(dropped, "a", "m1")
        await taken(dropped, "b", "m2")
        await refused(other, "c", "m3", "tenant")
    await until(lambda: limited.limits.held() == (0, {}), "the closed connections' places")
    async with limited.sockets() as open_socket:
        closed, kept = await open_socket(), await open_socket()
        await taken(closed, "a", "m1")
        await taken(closed, "b", "m2")
        await refused(kept, "c", "m3", "tenant")
        await closed.send_text("not a message")  # the server closes it (4400)
        with pytest.raises(WebSocketDisconnect):
            await closed.receive_json(timeout=15)
        await until(lambda: limited.limits.held() == (0, {}), "the closed connection's places")
        await taken(kept, "c", "m3")
        await taken(kept, "d", "m4")
        await until(limited.feeds(2), "only the kept connection's feeds")


async def test_subscribes_at_once_on_several_connections_never_pass_a_limit(
    limited: Limited,
) -> None:
    """Seven connections of two tenants each send three subscribes together: exactly the
    process's 3 are taken, none by a tenant past its 2, and every other is refused."""
    tenants = ("acme",) * 4 + ("globex",) * 3
    async with limited.sockets() as open_socket:
        sockets = [await open_socket(tenant) for tenant in tenants]

        async def send(ws: AsyncWebSocketSession, at: int) -> None:
            for ident in ("a", "b", "c"):
                await subscribe(ws, ident, f"m{at}{ident}")
            await ws.send_json({"type": "ping"})

        async def refusals(ws: AsyncWebSocketSession) -> int:
            """The socket's subscribes refused, counted until its pong."""
            count = 0
            while (message := await ws.receive_json(timeout=20)) != {"type": "pong"}:
                assert message["type"] == "error", message
                assert message["payload"][0]["extensions"]["code"] == "SUBSCRIPTION_LIMIT"
                count += 1
            return count

        await asyncio.gather(*(send(ws, at) for at, ws in enumerate(sockets)))
        refused_by = await asyncio.gather(*(refusals(ws) for ws in sockets))
        taken_by = {"acme": sum(3 - n for n in refused_by[:4])}
        taken_by["globex"] = sum(3 - n for n in refused_by[4:])
        assert sum(taken_by.values()) == 3
        assert max(taken_by.values()) <= 2
        assert limited.limits.held() == (3, {t: n for t, n in taken_by.items() if n})
        await until(limited.feeds(3), "the three taken subscriptions' feeds")

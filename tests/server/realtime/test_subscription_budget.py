"""Subscriptions are charged to the tenant's budget, the one HTTP requests are charged to:
a subscribe takes its cost (refused THROTTLED as an `error` message, the connection kept),
each event the objects it returned, and a subscription whose tenant has spent its budget
ends THROTTLED before its next event reads the store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from httpx_ws import AsyncWebSocketSession

from generated.models.user import User as UserModel
from generated.queries.user import get_user
from keygraph.cursor import CursorCodec
from keygraph.plan import Put
from keygraph.serve.budget import Budget
from keygraph.store import Session
from keygraph.stores.embedded.store import EmbeddedStore
from server.edge.app import App
from server.graphql.ids import local_id
from server.settings import Limits, Settings
from tests.server.conftest import SECRET, Api
from tests.server.realtime.capturing_store import CapturingStore
from tests.server.realtime.conftest import Connect, Sockets, realtime_of, receive, settle, subscribe
from tests.server.realtime.memory_stream import MemoryStream

USER = "subscription($id: ID!) { userChanged(id: $id) { change user { name } } }"
"""Costs 2: the change and its user."""
USER_AND_GROUPS = """subscription($id: ID!) {
  userChanged(id: $id) { change user { name groups(first: 10) { edges { node { name } } } } }
}"""
"""Costs 12; an event of a user in no group returns 2 objects."""
ORDERS = "subscription($u: ID!) { orderChanged(userId: $u) { change order { id } } }"
VIEWER = "{ viewer { tenant } users(first: 2) { edges { node { id } } } }"


@pytest.fixture
def app(hand_app: App) -> App:
    """The hand-written server alone: it alone charges each event to the budget."""
    return hand_app


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path,
        jwt_secret=SECRET,
        stream_poll_interval=0.01,
        max_subscriptions_per_connection=32,
        limits=Limits(max_cost=40, tenant_budget=40, tenant_refill=0.01),
    ).resolved()


def budget(app: App) -> Budget:
    return realtime_of(app).budget


async def rename(store: EmbeddedStore, stream: MemoryStream, user_id: str, name: str) -> None:
    """A write straight to the store (charged to no one), which reaches subscribers."""
    session = Session(store, CursorCodec(b"k" * 32))
    model = await get_user(session, "acme", local_id(user_id, "User"), consistent=True)
    assert isinstance(model, UserModel)
    renamed = model.model_copy(update={"name": name, "version": model.version + 1})
    await CapturingStore(store, stream).put(Put(item=renamed.to_item("acme")))


async def pong(ws: AsyncWebSocketSession) -> None:
    """The connection goes on, and nothing was sent on it before the pong."""
    await ws.send_json({"type": "ping"})
    assert await receive(ws) == {"type": "pong"}


def throttled(message: dict[str, Any], op_id: str) -> None:
    assert (message["type"], message["id"]) == ("error", op_id), message
    (error,) = message["payload"]
    assert error["extensions"]["code"] == "THROTTLED"
    assert error["extensions"]["retryAfter"] >= 1
    assert "budget" in error["message"]


async def test_a_subscribe_is_charged_and_refused_when_the_budget_is_spent(
    app: App, sockets: Sockets, acme: Api, acme_token: str, globex_token: str
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()  # read by the stream reader before anyone subscribes
    held = int(budget(app).remaining("acme")) // 2
    async with sockets() as open_session:
        ws = await open_session(acme_token)
        for n in range(held + 1):
            await subscribe(ws, str(n), USER, {"id": bob["id"]})
        throttled(await receive(ws), str(held))
        await pong(ws)
        assert budget(app).remaining("acme") < 2
        auth = {"Authorization": f"Bearer {acme_token}"}
        answer = await acme.client.post("/graphql", json={"query": VIEWER}, headers=auth)
        assert answer.status_code == 429  # HTTP requests share the budget
        other = await open_session(globex_token)
        await subscribe(other, "1", USER, {"id": bob["id"]})
        await settle()
        await pong(other)  # another tenant's subscribe is not refused


async def test_a_subscribe_refused_when_subscribing_is_not_charged(
    app: App, connect: Connect, acme: Api, member_token: Callable[[str], str]
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    carol = await acme.create_user("carol@acme.test", "Carol")
    before = budget(app).remaining("acme")
    async with connect(member_token(local_id(carol["id"], "User"))) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})  # another user's orders
        message = await receive(ws)
        assert message["payload"][0]["extensions"]["code"] == "FORBIDDEN"
    assert budget(app).remaining("acme") == pytest.approx(before, abs=0.5)


async def test_an_event_is_charged_the_objects_it_returns(
    app: App, connect: Connect, acme: Api, store: EmbeddedStore, stream: MemoryStream
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()  # read by the stream reader before anyone subscribes
    before = budget(app).remaining("acme")
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", USER_AND_GROUPS, {"id": bob["id"]})
        await settle()
        assert budget(app).remaining("acme") == pytest.approx(before - 12, abs=0.5)
        await rename(store, stream, bob["id"], "Robert")
        message = await receive(ws)
        assert message["payload"]["data"]["userChanged"]["user"]["groups"]["edges"] == []
        assert budget(app).remaining("acme") == pytest.approx(before - 12 - 2, abs=0.5)


async def test_a_spent_budget_ends_the_subscription_before_its_next_event(
    app: App,
    connect: Connect,
    acme: Api,
    store: EmbeddedStore,
    stream: MemoryStream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()  # read by the stream reader before anyone subscribes
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", USER, {"id": bob["id"]})
        await settle()
        events = int(budget(app).remaining("acme")) // 2
        for n in range(events):
            await rename(store, stream, bob["id"], f"Bob {n}")
            message = await receive(ws)
            assert message["payload"]["data"]["userChanged"]["user"] == {"name": f"Bob {n}"}
        await rename(store, stream, bob["id"], "Robert")
        throttled(await receive(ws), "1")
        await rename(store, stream, bob["id"], "Rob")
        await settle()
        await pong(ws)  # the subscription ended, the connection goes on
    ended = [r for r in caplog.records if "subscription ended: the tenant" in r.getMessage()]
    assert [(r.levelname, r.exc_info) for r in ended] == [("WARNING", None)]

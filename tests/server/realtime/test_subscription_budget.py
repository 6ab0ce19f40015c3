"""A subscribe is admitted by its cost from the tenant's budget, the one HTTP requests are
charged to (keygraph/serve/admission.py): it takes its cost, and one the budget no longer
holds is refused THROTTLED as an `error` message, the connection kept, taking nothing;
another tenant's budget is its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest
from httpx_ws import AsyncWebSocketSession
from starlette.applications import Starlette

from keygraph.serve.budget import TenantBudget
from keygraph.store import Store
from keygraph.stores.embedded.store import EmbeddedStore
from server.settings import Settings
from tests.server.conftest import SECRET, Api
from tests.server.realtime.capturing_store import CapturingStore
from tests.server.realtime.conftest import Sockets, receive, settle, spec_app, subscribe
from tests.server.realtime.memory_stream import MemoryStream
from tests.waiting import until

USER = """subscription($id: ID!) {
  userChanged(id: $id) { change user { name groups(first: 5) { edges { node { name } } } } }
}"""
"""Costs the groups it may read (the event's user is the change's, read by no one)."""
READ = "query($id: ID!) { user(id: $id) { name groups(first: 5) { edges { node { name } } } } }"
"""The user and what the subscription's events read: it costs more than a subscribe."""
CAPACITY = 40


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """More subscriptions than the budget pays for, on a connection, a tenant, a worker."""
    return Settings(
        data_dir=tmp_path,
        jwt_secret=SECRET,
        stream_poll_interval=0.01,
        max_subscriptions_per_connection=64,
        max_subscriptions_per_tenant=64,
        max_subscriptions_per_worker=64,
    ).resolved()


@pytest.fixture
def budget() -> TenantBudget:
    return TenantBudget(CAPACITY, 0.01)


@pytest.fixture
async def app(
    settings: Settings, store: EmbeddedStore, stream: MemoryStream, budget: TenantBudget
) -> AsyncIterator[Starlette]:
    built = spec_app(
        settings,
        cast(Store, CapturingStore(store, stream)),
        stream,
        budget=budget,
        max_cost=CAPACITY,
    )
    async with built.router.lifespan_context(built):
        yield built


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
    app: Starlette,
    budget: TenantBudget,
    sockets: Sockets,
    acme: Api,
    acme_token: str,
    globex_token: str,
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    before = budget.remaining("acme")
    async with sockets() as open_session:
        ws = await open_session(acme_token)
        await subscribe(ws, "0", USER, {"id": bob["id"]})
        await until(lambda: budget.remaining("acme") < before - 0.5, "the subscribe's charge")
        cost = before - budget.remaining("acme")
        held = int(budget.remaining("acme") // cost)
        for n in range(1, held + 2):
            await subscribe(ws, str(n), USER, {"id": bob["id"]})
        throttled(await receive(ws), str(held + 1))
        await pong(ws)
        assert budget.remaining("acme") == pytest.approx(before - (held + 1) * cost, abs=0.5)
        auth = {"Authorization": f"Bearer {acme_token}"}
        answer = await acme.client.post(
            "/graphql", json={"query": READ, "variables": {"id": bob["id"]}}, headers=auth
        )
        assert answer.status_code == 429  # HTTP requests share the budget
        other = await open_session(globex_token)
        await subscribe(other, "1", USER, {"id": bob["id"]})
        await settle()
        await pong(other)  # another tenant's subscribe is not refused
        assert budget.remaining("globex") == pytest.approx(CAPACITY - cost, abs=0.5)

"""/metrics through the compiled API as `serve` builds it from the settings: guarded by its
token, and counting requests by operation and outcome, store calls by kind and access
pattern, capacity units, refusals (429, 504) and requests in flight. Metrics are
process-wide: each test compares two scrapes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from generated.table import TABLE
from keygraph.cursor import CursorCodec
from keygraph.serve import create_app
from keygraph.store import Session, Store
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.stores.view import Planned, StoreView
from server.auth.tokens import issue_token
from server.compiled import compiled
from server.domain.geo import INLINE_MAX_CELLS, cover_circle
from server.domain.users import create_user
from server.settings import Limits, Settings, SettingsError, load_settings
from tests.server.conftest import SECRET
from tests.server.observability.helpers import TOKEN, scrape, total, value
from tests.waiting import eventually

R = TypeVar("R")

CREATE_USER = """mutation CreateUser($email: String!) {
  createUser(input: {email: $email, name: "Ann"}) { id } }"""
GET_USER = "query GetUser($id: ID!) { user(id: $id) { id name } }"
VIEWER = "query Viewer { viewer { tenant } }"
DURATION = "keygraph_request_duration_seconds_count"


def settings_for(tmp_path: Path, **changes: Any) -> Settings:
    limits = changes.pop("limits", Limits())
    base = Settings(env="dev", data_dir=tmp_path, jwt_secret=SECRET, limits=limits)
    return replace(base, **changes).resolved()


def admin_token(settings: Settings, tenant: str = "acme") -> str:
    return issue_token(settings, tenant, "alice", roles=["admin"])


class SlowStore(StoreView):
    """Every call waits `delay` seconds first."""

    def __init__(self, inner: Store, delay: float) -> None:
        super().__init__(inner)
        self.delay = delay

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        await asyncio.sleep(self.delay)
        return await call()


@contextlib.asynccontextmanager
async def app_client(
    settings: Settings, wrap: Callable[[Store], Store] | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app `serve` runs (lifespan run) over a fresh embedded store,
    `wrap`ped if given."""
    store = EmbeddedStore(TABLE, path=settings.data_dir / "keygraph.sqlite3")
    app = create_app(compiled(settings, wrap(store) if wrap else store))
    transport = httpx.ASGITransport(app=app)
    try:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://keygraph.test") as client,
        ):
            yield client
    finally:
        await store.close()


async def post(
    client: httpx.AsyncClient, token: str, query: str, variables: dict[str, object] | None = None
) -> httpx.Response:
    return await client.post(
        "/graphql",
        json={"query": query, "variables": variables or {}},
        headers={"Authorization": f"Bearer {token}"},
    )


async def test_metrics_need_the_token(tmp_path: Path) -> None:
    async with app_client(settings_for(tmp_path, metrics_token=TOKEN)) as client:
        assert (await client.get("/metrics")).status_code == 401
        wrong = {"Authorization": "Bearer " + "x" * len(TOKEN)}
        assert (await client.get("/metrics", headers=wrong)).status_code == 401
        right = {"Authorization": f"Bearer {TOKEN}"}
        assert (await client.get("/metrics", headers=right)).status_code == 200


async def test_no_metrics_route_unless_configured(tmp_path: Path) -> None:
    async with app_client(settings_for(tmp_path)) as client:
        response = await client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 404


async def test_requests_store_calls_and_units_are_counted(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, metrics_token=TOKEN)
    token = admin_token(settings)
    async with app_client(settings) as client:
        before = await scrape(client)
        created = await post(client, token, CREATE_USER, {"email": "ann@example.com"})
        user_id = created.json()["data"]["createUser"]["id"]
        for _ in range(3):
            assert (await post(client, token, GET_USER, {"id": user_id})).status_code == 200
        malformed = await post(client, token, GET_USER, {"id": "nobody"})
        assert malformed.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
        after = await scrape(client)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew(DURATION, operation="GetUser", code="OK") == 3
    assert grew(DURATION, operation="GetUser", code="BAD_USER_INPUT") == 1
    assert grew(DURATION, operation="CreateUser", code="OK") == 1
    store_calls = "keygraph_store_call_duration_seconds_count"
    assert grew(store_calls, call="GetItem", pattern="get_user") >= 3
    assert grew(store_calls, call="TransactWriteItems", pattern="transaction") >= 1
    # three eventually consistent reads of an item under 4 KB: half a unit each
    assert grew("keygraph_capacity_units_total", unit="read", pattern="get_user") >= 3 * 0.5
    assert total(after, "keygraph_capacity_units_total", unit="write") > total(
        before, "keygraph_capacity_units_total", unit="write"
    )


async def test_the_cells_of_shops_near_count_one_query_each(tmp_path: Path) -> None:
    """The cells a covering reads together are still one Query each, by their pattern."""
    settings = settings_for(tmp_path, metrics_token=TOKEN)
    token = admin_token(settings)
    near = "query { shopsNear(lat: 10.0, lng: 20.0, radiusKm: 0.05) { distanceKm } }"
    async with app_client(settings) as client:
        before = await scrape(client)
        assert "errors" not in (await post(client, token, near)).json()
        after = await scrape(client)
    cells = len(cover_circle(10.0, 20.0, 0.05, INLINE_MAX_CELLS))
    store_calls = "keygraph_store_call_duration_seconds_count"
    grew = value(after, store_calls, call="Query", pattern="shops_in_cell") - value(
        before, store_calls, call="Query", pattern="shops_in_cell"
    )
    assert cells > 1
    assert grew == cells


async def test_errors_are_counted_by_their_code(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, metrics_token=TOKEN)
    async with app_client(settings) as client:
        before = await scrape(client)
        bad = await post(client, "not-a-token", VIEWER)
        assert bad.status_code == 401
        after = await scrape(client)
    grew = value(after, DURATION, operation="", code="UNAUTHENTICATED") - value(
        before, DURATION, operation="", code="UNAUTHENTICATED"
    )
    assert grew == 1


async def test_budget_refusals_are_counted(tmp_path: Path) -> None:
    limits = Limits(max_cost=5, tenant_budget=5, tenant_refill=0.001)
    settings = settings_for(tmp_path, metrics_token=TOKEN, limits=limits)
    token = admin_token(settings)
    seeded = EmbeddedStore(TABLE, path=tmp_path / "keygraph.sqlite3")
    session = Session(seeded, CursorCodec(settings.cursor_key()))
    for n in range(3):
        await create_user(session, "acme", f"u{n}@example.com", "Someone")
    await seeded.close()
    query = "query Users { users(first: 3) { edges { node { id } } } }"
    async with app_client(settings) as client:
        before = await scrape(client)
        statuses = [(await post(client, token, query)).status_code for _ in range(3)]
        after = await scrape(client)
    assert 429 in statuses
    refusals = "keygraph_requests_refused_total"
    grew = value(after, refusals, status="429", code="THROTTLED") - value(
        before, refusals, status="429", code="THROTTLED"
    )
    assert grew == statuses.count(429)


async def test_timeouts_and_requests_in_flight(tmp_path: Path) -> None:
    limits = Limits(request_timeout=0.5)
    settings = settings_for(tmp_path, metrics_token=TOKEN, limits=limits)
    token = admin_token(settings)
    query = "query Users { users(first: 5) { edges { node { id } } } }"
    async with app_client(settings, wrap=lambda store: SlowStore(store, 1.0)) as client:
        before = await scrape(client)
        slow = asyncio.create_task(post(client, token, query))

        async def in_flight() -> bool:
            return value(await scrape(client), "keygraph_requests_in_flight") == 1

        await eventually(in_flight, "the slow request to be in flight")
        timed_out = await slow
        after = await scrape(client)
    assert value(after, "keygraph_requests_in_flight") == 0
    assert timed_out.status_code == 504
    refusals = "keygraph_requests_refused_total"
    grew = value(after, refusals, status="504", code="TIMEOUT") - value(
        before, refusals, status="504", code="TIMEOUT"
    )
    assert grew == 1


def test_metrics_settings_are_checked() -> None:
    env = {"KEYGRAPH_JWT_SECRET": SECRET}
    settings = load_settings(
        {
            **env,
            "KEYGRAPH_METRICS_TOKEN": TOKEN,
            "KEYGRAPH_METRICS_PORT": "9102",
        }
    )
    assert settings.metrics_enabled
    assert settings.metrics_port == 9102
    assert not load_settings(env).metrics_enabled
    with pytest.raises(SettingsError, match="16 characters"):
        load_settings({**env, "KEYGRAPH_METRICS_TOKEN": "short"})
    with pytest.raises(SettingsError, match="differ"):
        load_settings({**env, "KEYGRAPH_METRICS_PORT": "8000"})

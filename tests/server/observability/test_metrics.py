"""/metrics through the app: guarded by its token, and counting requests by operation and
outcome, store calls by kind and access pattern, capacity units, refusals (429, 503, 504),
requests in flight, tenants only when allowed, and the table's cleanup tasks and migrations.
Metrics are process-wide: each test compares two scrapes."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from prometheus_client import REGISTRY

from generated.models.cleanup_task import CleanupTask
from generated.models.enums import CleanupTaskKind
from generated.table import TABLE
from keygraph.cursor import CursorCodec
from keygraph.ids import new_id
from keygraph.migrate.target import MIGRATION_PARTITION
from keygraph.plan import Put
from keygraph.store import Session
from keygraph.stores.embedded.store import EmbeddedStore
from server.domain import cleanup
from server.domain.geo import INLINE_MAX_CELLS, cover_circle
from server.domain.users import create_user
from server.observability import exposition
from server.settings import Limits, SettingsError, load_settings
from tests.server.conftest import SECRET
from tests.server.observability.helpers import (
    TOKEN,
    SlowStore,
    admin_token,
    app_client,
    scrape,
    settings_for,
    total,
    value,
)
from tests.waiting import eventually

CREATE_USER = """mutation CreateUser($email: String!) {
  createUser(input: {email: $email, name: "Ann"}) { id } }"""
GET_USER = "query GetUser($id: ID!) { user(id: $id) { id name } }"
VIEWER = "query Viewer { viewer { tenant } }"
DURATION = "keygraph_request_duration_seconds_count"


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
    assert grew("keygraph_capacity_units_total", unit="read", pattern="get_user") >= 2
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


async def test_timeouts_shedding_and_requests_in_flight(tmp_path: Path) -> None:
    limits = Limits(request_timeout=0.5, max_in_flight=1)
    settings = settings_for(tmp_path, metrics_token=TOKEN, limits=limits)
    token = admin_token(settings)
    query = "query Users { users(first: 5) { edges { node { id } } } }"
    async with app_client(settings, wrap=lambda store: SlowStore(store, 1.0)) as client:
        before = await scrape(client)
        slow = asyncio.create_task(post(client, token, query))

        async def in_flight() -> bool:
            return value(await scrape(client), "keygraph_requests_in_flight") == 1

        await eventually(in_flight, "the slow request to be in flight")
        during = await scrape(client)
        shed = await post(client, token, query)
        timed_out = await slow
        after = await scrape(client)
    assert value(during, "keygraph_requests_in_flight") == 1
    assert value(after, "keygraph_requests_in_flight") == 0
    assert (shed.status_code, timed_out.status_code) == (503, 504)
    refusals = "keygraph_requests_refused_total"
    for status, code in (
        ("503", shed.json()["errors"][0]["extensions"]["code"]),
        ("504", "TIMEOUT"),
    ):
        grew = value(after, refusals, status=status, code=code) - value(
            before, refusals, status=status, code=code
        )
        assert grew == 1, (status, code)


@pytest.mark.parametrize("allowed", [False, True])
async def test_tenants_are_labels_only_when_allowed(tmp_path: Path, allowed: bool) -> None:
    settings = settings_for(tmp_path, metrics_token=TOKEN, metrics_tenant_label=allowed)
    tenant = f"tenant{new_id().lower()}"
    async with app_client(settings) as client:
        await post(client, admin_token(settings, tenant), VIEWER)
        after = await scrape(client)
    assert any(dict(labels).get("tenant") == tenant for _, labels in after) is allowed
    if allowed:
        assert value(after, "keygraph_tenant_requests_total", tenant=tenant, code="OK") == 1


async def test_cleanup_tasks_and_migrations_are_read_from_the_table(tmp_path: Path) -> None:
    store = EmbeddedStore(TABLE, path=tmp_path / "keygraph.sqlite3")
    task = CleanupTask(
        task_id=new_id(),
        tenant="acme",
        kind=CleanupTaskKind.USER,
        subject="u1",
        created_at=datetime(2020, 1, 1, tzinfo=UTC),
    )
    await store.put(cleanup.put_task(task))
    state = {"scanned": 120, "updated": {"User": 7, "Order": 3}, "done": False, "updated_at": 99}
    await store.put(Put({"PK": MIGRATION_PARTITION, "SK": "abc#*", "state": state}))
    await exposition.read_table(store)
    await store.close()

    def gauge(name: str, **labels: str) -> float | None:
        return REGISTRY.get_sample_value(name, labels)

    assert gauge("keygraph_cleanup_tasks_pending") == 1
    assert (gauge("keygraph_cleanup_oldest_task_age_seconds") or 0) > 365 * 86400
    assert gauge("keygraph_migration_items_scanned", migration="abc#*") == 120
    assert gauge("keygraph_migration_items_updated", migration="abc#*") == 10
    assert gauge("keygraph_migration_done", migration="abc#*") == 0
    assert gauge("keygraph_migration_checkpoint_timestamp_seconds", migration="abc#*") == 99


def test_metrics_settings_are_checked() -> None:
    env = {"KEYGRAPH_JWT_SECRET": SECRET}
    settings = load_settings(
        {
            **env,
            "KEYGRAPH_METRICS_TOKEN": TOKEN,
            "KEYGRAPH_METRICS_PORT": "9102",
            "KEYGRAPH_METRICS_TENANT_LABEL": "yes",
        }
    )
    assert settings.metrics_enabled
    assert (settings.metrics_port, settings.metrics_tenant_label) == (9102, True)
    assert not load_settings(env).metrics_enabled
    with pytest.raises(SettingsError, match="16 characters"):
        load_settings({**env, "KEYGRAPH_METRICS_TOKEN": "short"})
    with pytest.raises(SettingsError, match="differ"):
        load_settings({**env, "KEYGRAPH_METRICS_PORT": "8000"})

"""Each tenant's budget of cost points: the token bucket, and 429 THROTTLED over HTTP while
other tenants are served."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from generated.table import TABLE
from keygraph.cursor import CursorCodec
from keygraph.serve.budget import FORGET_AFTER, TenantBudget, share
from keygraph.store import Session
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.domain.users import create_user
from server.edge.app import create_app
from server.settings import Limits, Settings, SettingsError, load_settings
from tests.server.conftest import SECRET


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_refuses_what_it_does_not_hold_and_refills() -> None:
    clock = Clock()
    budget = TenantBudget(100, 10, clock)
    assert budget.take("a", 60).admitted
    refused = budget.take("a", 60)
    assert not refused.admitted
    assert refused.remaining == 40
    assert refused.retry_after == 2  # 20 points at 10 a second
    assert budget.take("b", 100).admitted  # another tenant has its own bucket
    clock.now = 2.0
    assert budget.take("a", 60).admitted
    clock.now = 1000.0
    assert budget.remaining("a") == 100  # never above capacity


def test_unused_points_come_back() -> None:
    budget = TenantBudget(100, 1, Clock())
    budget.take("a", 80)
    assert budget.refund("a", 70) == 90
    assert budget.refund("a", 500) == 100
    assert budget.refund("a", -5) == 100


def test_full_buckets_are_forgotten() -> None:
    clock = Clock()
    budget = TenantBudget(10, 1, clock)
    for index in range(FORGET_AFTER):
        budget.take(f"t{index}", 1)
    clock.now = 100.0  # every bucket has refilled
    budget.take("newcomer", 1)
    assert budget.remaining("t0") == 10
    assert len(budget._buckets) <= 3


def test_workers_share_the_budget() -> None:
    assert share(100_000, 20_000, 4) == (25_000, 5_000)


def test_the_budget_must_hold_the_costliest_operation(tmp_path: Path) -> None:
    with pytest.raises(SettingsError):
        load_settings({"KEYGRAPH_MAX_COST": "500", "KEYGRAPH_TENANT_BUDGET": "100"})


@pytest.fixture
async def tight(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    limits = Limits(max_cost=5, tenant_budget=5, tenant_refill=0.001)
    settings = Settings(env="dev", data_dir=tmp_path, jwt_secret=SECRET, limits=limits).resolved()
    store = EmbeddedStore(TABLE, path=tmp_path / "tight.sqlite3")
    session = Session(store, CursorCodec(settings.cursor_key()))
    for index in range(3):
        await create_user(session, "acme", f"u{index}@example.com", "Someone")
    transport = httpx.ASGITransport(app=create_app(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield client
    await store.close()


async def test_a_tenant_over_budget_gets_429_while_others_are_served(
    tight: httpx.AsyncClient, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, jwt_secret=SECRET)
    query = {"query": "{ users(first: 3) { edges { node { id } } } }"}
    headers = {"Authorization": f"Bearer {issue_token(settings, 'acme', roles=['admin'])}"}
    first = await tight.post("/graphql", json=query, headers=headers)
    assert first.status_code == 200
    assert first.json()["extensions"]["cost"]["budget"]["remaining"] < 3
    second = await tight.post("/graphql", json=query, headers=headers)
    assert second.status_code == 429
    body = second.json()
    assert [e["extensions"]["code"] for e in body["errors"]] == ["THROTTLED"]
    assert int(second.headers["retry-after"]) >= 1
    assert body["errors"][0]["extensions"]["retryAfter"] == int(second.headers["retry-after"])
    assert body["extensions"]["storeCalls"] == 0
    other = {"Authorization": f"Bearer {issue_token(settings, 'globex', roles=['admin'])}"}
    served = await tight.post("/graphql", json=query, headers=other)
    assert served.status_code == 200
    assert "errors" not in served.json()

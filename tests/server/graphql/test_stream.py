"""A query that may return more objects than KEYGRAPH_STREAM_COST is read and sent in parts
(keygraph/serve/parted.py): the same answer, its list of users read a part at a time, what
a part read freed before the next part loads, and a failure in a later part nulling what a
whole response would."""

from __future__ import annotations

import gc
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from generated.models.user_order import UserOrder
from generated.queries.user_order import user_orders as generated_user_orders
from keygraph.page import Page
from keygraph.serve.parted import Part
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.edge.app import create_app
from server.graphql import loaders
from server.settings import Limits, Settings
from tests.server.conftest import SECRET, Api, app_of, store_counts
from tests.server.graphql.test_batching import _seed

PARTS = Limits(stream_cost=100, part_objects=40)
QUERY = """{ users(first: 10) { edges { node { email
  orders(first: 5) { edges { node { id items { sku } } } } } } } }"""
"""It may return 10 x (1 + 5 x (1 + 50)) = 2,560 objects: parts of about 40 are asked for."""


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(env="dev", data_dir=tmp_path, jwt_secret=SECRET, limits=PARTS).resolved()


@pytest.mark.hand_only(
    "keygraph serve counts an order's items as part of it (50 objects where the server counts "
    "170), and so reads more users a part"
)
async def test_a_large_query_is_read_and_sent_in_parts(acme: Api, store: EmbeddedStore) -> None:
    await _seed(store, users=10, orders_each=4)
    response = await acme.client.post(
        "/graphql", json={"query": QUERY}, headers={"Authorization": f"Bearer {acme.token}"}
    )
    assert int(response.headers["content-length"]) == len(response.content)
    body = orjson.loads(response.content)
    users = body["data"]["users"]["edges"]
    assert len(users) == 10
    assert all(len(user["node"]["orders"]["edges"]) == 4 for user in users)
    assert body["extensions"]["cost"]["actual"]["objects"] == 10 + 40 + 120
    # the first part is one user (its estimate is 256 objects); each held 17, so the next
    # parts are two users each: 1, 2, 2, 2, 2, 1, each part's order queries a wave
    assert store_counts(body) == {"storeCalls": 1 + 10, "storeWaves": 1 + 6}


async def test_what_a_part_read_is_freed_before_the_next_part_loads(
    server: str,
    settings: Settings,
    store: EmbeddedStore,
    acme_token: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Parts of about 12 objects: a user each on the server, which counts an order's items
    (each user holds 17), two on the spec's API (each holds 5)."""
    await _seed(store, users=10, orders_each=4)
    small = replace(settings, limits=replace(PARTS, stream_cost=50, part_objects=12))
    live: list[int] = []
    add = Part.add

    def held() -> int:
        return sum(type(thing) in (UserOrder, Page) for thing in gc.get_objects())

    def counting(part: Part, item: Any) -> None:
        live.append(held() - before)
        add(part, item)

    gc.collect()
    before = held()  # what earlier tests left alive, unchanged by this one

    monkeypatch.setattr(Part, "add", counting)
    transport = httpx.ASGITransport(app=app_of(server, small, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        data = await Api(client, acme_token).data(QUERY)
    assert len(data["users"]["edges"]) == 10
    # at most a part's two users' pages and their 8 orders (and the page of users the spec's
    # API reads), never the 40 orders read
    assert len(live) == 10
    assert max(live) <= 1 + 2 * (1 + 4)


async def test_a_failure_in_a_later_part_nulls_what_a_whole_response_would(
    settings: Settings, store: EmbeddedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_ids = await _seed(store, users=10, orders_each=2)
    failing = user_ids[7]  # in the fifth part
    user_orders = generated_user_orders

    async def flaky(session: Any, tenant: str, user_id: str, **kwargs: Any) -> Any:
        if user_id == failing:
            raise RuntimeError("the store failed")
        return await user_orders(session, tenant, user_id, **kwargs)

    monkeypatch.setattr(loaders, "user_orders", flaky)
    token = issue_token(settings, "acme", "alice", roles=["admin"])
    answers = []
    for executor in ("compiled", "strawberry"):
        app = create_app(replace(settings, executor=executor), store)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.post(
                "/graphql",
                json={"query": QUERY.replace("users(first: 10)", "a: users(first: 10)")},
                headers={"Authorization": f"Bearer {token}", "X-Request-Id": "r"},
            )
        answers.append(orjson.loads(response.content))
    parted, whole = answers
    assert parted["errors"][0]["path"] == ["a", "edges", 7, "node", "orders"]
    assert parted["data"] == whole["data"]
    assert parted["errors"] == whole["errors"]
    assert (
        parted["extensions"]["cost"]["actual"]["objects"]
        == (whole["extensions"]["cost"]["actual"]["objects"])
    )
    assert parted["extensions"]["storeWaves"] > whole["extensions"]["storeWaves"]

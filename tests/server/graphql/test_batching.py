"""Store calls per nested query: one call per parent only where DynamoDB has no batch form,
entity loads batched, each level of the query one wave (DESIGN §4)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from generated.queries.user import plan_list_users
from generated.table import TABLE
from keygraph.plan import Item, Put, Update
from keygraph.serve import create_app
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.compiled import compiled
from server.domain.groups import (
    in_key_order,
    new_group,
    new_group_items,
    new_membership,
    new_membership_items,
)
from server.domain.orders import new_order, new_order_items
from server.domain.users import new_user, new_user_items
from server.settings import Settings
from tests.server.conftest import SECRET, Api, gql, store_counts

START = datetime(2024, 1, 1, tzinfo=UTC)


async def _write(store: EmbeddedStore, items: list[Item]) -> None:
    for i in range(0, len(items), 25):
        await store.batch_write([Put(item=item) for item in items[i : i + 25]])


async def _seed(store: EmbeddedStore, users: int, orders_each: int, groups: int = 0) -> list[str]:
    """`users` users with `orders_each` orders of 3 lines each; every user in every group."""
    items: list[Item] = []
    user_ids = []
    all_groups = [new_group(f"group {g}", now=START) for g in range(groups)]
    group_ids = in_key_order(group.group_id for group in all_groups)
    for u in range(users):
        user = new_user(f"user{u}@example.org", f"User {u}", now=START + timedelta(seconds=u))
        user_ids.append(user.user_id)
        items += new_user_items("acme", user.model_copy(update={"group_ids": group_ids}))
        for o in range(orders_each):
            lines = [
                {"sku": f"S{k}", "name": "n", "quantity": 1, "unit_price_cents": 5}
                for k in range(3)
            ]
            order = new_order(
                user.user_id, "EUR", lines, now=START + timedelta(minutes=o, seconds=u)
            )
            items += new_order_items("acme", order)
    for group in all_groups:
        items += new_group_items("acme", group)
        for user_id in user_ids:
            items += new_membership_items(
                "acme", new_membership(user_id, group.group_id, now=START)
            )
    await _write(store, items)
    return user_ids


NESTED = """{ users(first: 50) { edges { node { email
  orders(first: 5) { edges { node { totalCents items { sku quantity } } } } } } } }"""


async def test_users_orders_items_is_one_page_plus_one_query_per_user(
    acme: Api, store: EmbeddedStore
) -> None:
    await _seed(store, users=50, orders_each=6)
    body = await acme(NESTED)
    edges = body["data"]["users"]["edges"]
    assert len(edges) == 50
    assert all(len(edge["node"]["orders"]["edges"]) == 5 for edge in edges)
    assert all(
        len(order["node"]["items"]) == 3
        for edge in edges
        for order in edge["node"]["orders"]["edges"]
    )
    assert store_counts(body) == {"storeCalls": 1 + 50, "storeWaves": 2}


async def test_order_users_load_in_one_batch_get(acme: Api, store: EmbeddedStore) -> None:
    await _seed(store, users=50, orders_each=2)
    query = """{ users(first: 50) { edges { node {
      orders(first: 5) { edges { node { user { email } } } } } } } }"""
    body = await acme(query)
    for edge in body["data"]["users"]["edges"]:
        assert len(edge["node"]["orders"]["edges"]) == 2
    # the page, 50 order queries in one wave; the orders' users are those the page read
    assert store_counts(body) == {"storeCalls": 51, "storeWaves": 2}


async def test_identical_sub_queries_run_once(acme: Api, store: EmbeddedStore) -> None:
    await _seed(store, users=10, orders_each=2)
    query = """{ users(first: 10) { edges { node {
      a: orders(first: 5) { edges { node { id } } }
      b: orders(first: 5) { edges { node { id } } }
      c: orders(first: 1) { edges { node { id } } } } } } }"""
    body = await acme(query)
    node = body["data"]["users"]["edges"][0]["node"]
    assert node["a"] == node["b"]
    assert node["c"]["edges"] == node["a"]["edges"][:1]
    # a and b share one query per user; c is another page size, so its own query
    assert store_counts(body) == {"storeCalls": 1 + 10 + 10, "storeWaves": 2}


GROUPS_AND_MEMBERS = """{ users(first: 20) { edges { node {
  groups { edges { node { name members(first: 20) { edges { node { email } } } } } } } } } }"""


async def test_groups_and_members_batch_their_entities(acme: Api, store: EmbeddedStore) -> None:
    await _seed(store, users=20, orders_each=0, groups=3)
    body = await acme(GROUPS_AND_MEMBERS)
    for edge in body["data"]["users"]["edges"]:
        groups = edge["node"]["groups"]["edges"]
        assert len(groups) == 3
        assert all(len(group["node"]["members"]["edges"]) == 20 for group in groups)
    # page; 1 batch get of the 3 groups (their ids are on the users); 3 member queries (the
    # same group under every user runs once); the members are the users the page read
    assert store_counts(body) == {"storeCalls": 1 + 1 + 3, "storeWaves": 3}


async def test_users_stored_before_they_kept_group_ids_query_their_memberships(
    acme: Api, store: EmbeddedStore
) -> None:
    await _seed(store, users=20, orders_each=0, groups=3)
    await _forget_group_ids(store)
    body = await acme(GROUPS_AND_MEMBERS)
    for edge in body["data"]["users"]["edges"]:
        assert len(edge["node"]["groups"]["edges"]) == 3
    # page; 20 membership queries; 1 batch get of the 3 groups; 3 member queries; the
    # members are the users the page read
    assert store_counts(body) == {"storeCalls": 1 + 20 + 1 + 3, "storeWaves": 4}


async def _forget_group_ids(store: EmbeddedStore) -> None:
    """Every user item as it was stored before users kept their group ids."""
    page = await store.query(plan_list_users("acme", limit=100))
    for item in page.items:
        await store.update(Update(key=TABLE.primary_key(item), remove=("group_ids",)))


async def test_more_than_100_entities_split_into_concurrent_batch_gets(
    acme: Api, store: EmbeddedStore
) -> None:
    await _seed(store, users=150, orders_each=1)
    fields = "pageInfo { endCursor } edges { node { user { id } } }"
    first = await acme.data(f"{{ ordersByStatus(status: PENDING, first: 100) {{ {fields} }} }}")
    cursor = first["ordersByStatus"]["pageInfo"]["endCursor"]
    query = f"""query($after: String) {{
      a: ordersByStatus(status: PENDING, first: 100) {{ {fields} }}
      b: ordersByStatus(status: PENDING, first: 100, after: $after) {{ {fields} }} }}"""
    body = await acme(query, {"after": cursor})
    owners = [
        edge["node"]["user"]["id"] for page in ("a", "b") for edge in body["data"][page]["edges"]
    ]
    assert len(set(owners)) == 150
    # two pages of orders; their 150 users in two BatchGetItem calls sent together
    assert store_counts(body) == {"storeCalls": 2 + 2, "storeWaves": 2}


async def test_counts_are_not_shown_in_production(store: EmbeddedStore) -> None:
    settings = Settings(env="production", jwt_secret=SECRET).resolved()
    app = create_app(compiled(settings, store))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        body = await gql(
            c,
            "{ users { edges { node { id } } } }",
            None,
            issue_token(settings, "acme", roles=["admin"]),
        )
    assert body["data"] == {"users": {"edges": []}}
    assert set(body["extensions"]) == {"cost"}

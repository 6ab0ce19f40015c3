"""Relations of a generated package's API, over each store, on this repository's spec and
its seed data: each answers the items its pattern reads from the parent; the get relations
of a page go out as one BatchGetItem, the query relations of a page as one Query a parent
in one wave (on a store that answers inline, one after another in one task, not a task
each), and the get relations those bring out in one more; gets go out together
where the spec has no batch get; a relation the caller's rule refuses is null with
FORBIDDEN."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest

from keygraph.api.ids import global_id
from keygraph.caller import Caller
from keygraph.plan import Put
from keygraph.store import Session, Store
from keygraph.stores.counting import CountingStore
from keygraph.stores.view import Planned
from server.seed.tenant import SeedSizes, seed
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CODEC, ROOT, Compiled, ask

Compile = Callable[[Path], Compiled]
R = TypeVar("R")
SIZES = SeedSizes(users=6, orders=12, groups=3, org_nodes=3, org_depth=2, shops=1, max_members=4)


class Calls(CountingStore):
    """Counts a request's store calls by DynamoDB operation, and its waves."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.kinds: Counter[str] = Counter()

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        self.kinds[kind] += 1
        return await super()._call(kind, plan, call)


@pytest.fixture
async def seeded(
    kind: str, store_factory: StoreFactory, compiled: Compile
) -> tuple[Compiled, Store]:
    package = compiled(ROOT / "access_patterns.toml")
    store = await store_factory(kind, package.table)
    await seed(store, "acme", SIZES, progress=False)
    return package, store


def nodes(connection: dict[str, Any]) -> list[dict[str, Any]]:
    return [edge["node"] for edge in connection["edges"]]


USERS = """{ users(first: 50) { edges { node {
  userId groupIds
  groups { edges { node { groupId } } }
  memberships(first: 50) { edges { node { userId groupId group { groupId } user { userId } } } }
  orders(first: 50) { edges { node { id orderId userId user { userId } } } }
} } } }"""


async def test_relations_answer_what_their_patterns_read(seeded: tuple[Compiled, Store]) -> None:
    package, store = seeded
    answer = await ask(package.schema, store, "acme", USERS)
    assert "errors" not in answer, answer
    users = nodes(answer["data"]["users"])
    assert len(users) == SIZES.users
    orders = memberships = 0
    for user in users:
        assert [g["groupId"] for g in nodes(user["groups"])] == user["groupIds"]
        for membership in nodes(user["memberships"]):
            assert membership["userId"] == user["userId"]
            assert membership["group"] == {"groupId": membership["groupId"]}
            assert membership["user"] == {"userId": user["userId"]}
            memberships += 1
        for order in nodes(user["orders"]):
            assert order["userId"] == user["userId"]
            assert order["user"] == {"userId": user["userId"]}
            assert order["id"] == global_id("Order", [order["orderId"]])  # a copy, as its order
            orders += 1
    assert orders == SIZES.orders
    assert memberships == sum(len(user["groupIds"]) for user in users) > 0


async def test_the_get_relations_of_a_wave_are_one_batch_get(
    seeded: tuple[Compiled, Store],
) -> None:
    package, store = seeded
    page = "{ ordersByStatus(status: %s, first: 100) { edges { node { orderId user { name } } } } }"
    counted = 0
    for status in ("PENDING", "PAID", "SHIPPED", "DELIVERED", "CANCELLED"):
        calls = Calls(store)
        answer = await ask(package.schema, calls, "acme", page % status)
        assert "errors" not in answer, answer
        orders = nodes(answer["data"]["ordersByStatus"])
        assert all(order["user"]["name"] for order in orders)
        counted += len(orders)
        expected = {"Query": 1, "BatchGetItem": 1} if orders else {"Query": 1}
        assert calls.kinds == expected, (status, len(orders))
    assert counted == SIZES.orders
    calls = Calls(store)  # every user's groups, from their lists, in one call
    document = "{ users { edges { node { groups { edges { node { name } } } } } } }"
    answer = await ask(package.schema, calls, "acme", document)
    assert "errors" not in answer, answer
    assert (calls.kinds, calls.waves) == ({"Query": 1, "BatchGetItem": 1}, 2)
    calls = Calls(store)  # the users of every user's orders, then all their groups
    document = """{ users { edges { node { orders { edges { node {
      user { name groups { edges { node { name } } } } } } } } } } }"""
    answer = await ask(package.schema, calls, "acme", document)
    assert "errors" not in answer, answer
    assert calls.kinds == {"Query": 1 + SIZES.users, "BatchGetItem": 2}
    assert calls.waves == 4


async def test_without_a_batch_get_the_gets_go_out_together(
    seeded: tuple[Compiled, Store],
) -> None:
    package, store = seeded
    user_class = package.module("models.user").User
    address_class = package.module("models.address").Address
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for n in range(3):
        user = user_class(
            user_id=f"u{n}",
            email=f"u{n}@example.com",
            name="U",
            created_at=at,
            version=1,
            default_address_id=f"a{n}",
        )
        address = address_class(
            user_id=f"u{n}",
            address_id=f"a{n}",
            label="home",
            line1="1 Main St",
            city=f"City {n}",
            postal_code="1000",
            country="NL",
            created_at=at,
            version=1,
        )
        await store.put(Put(user.to_item("globex")))
        await store.put(Put(address.to_item("globex")))
    calls = Calls(store)
    document = "{ users { edges { node { userId defaultAddress { city } } } } }"
    answer = await ask(package.schema, calls, "globex", document)
    assert "errors" not in answer, answer
    cities = {u["userId"]: u["defaultAddress"]["city"] for u in nodes(answer["data"]["users"])}
    assert cities == {f"u{n}": f"City {n}" for n in range(3)}
    assert (calls.kinds, calls.waves) == ({"Query": 1, "GetItem": 3}, 2)


async def test_query_relations_go_out_together(seeded: tuple[Compiled, Store]) -> None:
    package, store = seeded
    calls = Calls(store)
    document = "{ users { edges { node { orders { edges { node { orderId } } } } } } }"
    answer = await ask(package.schema, calls, "acme", document)
    assert "errors" not in answer, answer
    assert len(nodes(answer["data"]["users"])) == SIZES.users
    assert calls.kinds == {"Query": 1 + SIZES.users}  # the page, then one a user
    assert calls.waves == 2


async def test_relation_queries_take_no_task_each_where_the_store_answers_inline(
    seeded: tuple[Compiled, Store],
) -> None:
    package, store = seeded
    calls = Calls(store)
    document = "{ users { edges { node { orders { edges { node { orderId } } } } } } }"
    loop = asyncio.get_running_loop()
    made = 0

    def counted(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        nonlocal made
        made += 1
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.set_task_factory(counted)
    try:
        answer = await ask(package.schema, calls, "acme", document)
    finally:
        loop.set_task_factory(None)
    assert "errors" not in answer, answer
    assert any(nodes(user["orders"]) for user in nodes(answer["data"]["users"]))
    assert (calls.kinds, calls.waves) == ({"Query": 1 + SIZES.users}, 2)
    assert (made < SIZES.users) == calls.answers_inline, made


async def test_a_refused_relation_is_null_with_forbidden(seeded: tuple[Compiled, Store]) -> None:
    package, store = seeded
    admin = Caller("boss", frozenset({"admin"}))
    everyone = await ask(
        package.schema, store, "acme", "{ users { edges { node { userId } } } }", caller=admin
    )
    user_id = nodes(everyone["data"]["users"])[0]["userId"]
    member = Caller(user_id, frozenset({"member"}))
    document = """{ users { edges { node { userId
      orders { edges { node { orderId user { userId } } } } } } } }"""
    answer = await ask(package.schema, store, "acme", document, caller=member)
    users = nodes(answer["data"]["users"])
    mine = next(user for user in users if user["userId"] == user_id)
    others = [user for user in users if user["userId"] != user_id]
    assert all(user["orders"] is None for user in others)  # user_orders: owner_or_admin
    assert mine["orders"] is not None
    for order in nodes(mine["orders"]):
        assert order["user"] == {"userId": user_id}  # get_user: signed_in
    codes = Counter((e["extensions"]["code"], e["path"][-1]) for e in answer["errors"])
    assert codes == {("FORBIDDEN", "orders"): len(others)}


async def test_a_first_page_kept_on_the_parent_pages_on_as_its_query(
    seeded: tuple[Compiled, Store],
) -> None:
    package, store = seeded
    document = """query ($after: String) { users { edges { node { userId groupIds
      groups(first: 1, after: $after) { edges { cursor node { groupId } }
        pageInfo { hasNextPage endCursor } } } } } }"""
    calls = Calls(store)
    answer = await ask(package.schema, calls, "acme", document)
    assert calls.kinds == {"Query": 1, "BatchGetItem": 1}  # the first pages from group_ids
    users = [u for u in nodes(answer["data"]["users"]) if len(u["groupIds"]) > 1]
    assert users
    for user in users:
        seen, page = [], user["groups"]
        while True:
            seen += [edge["node"]["groupId"] for edge in page["edges"]]
            if not page["pageInfo"]["hasNextPage"]:
                break
            after = {"after": page["pageInfo"]["endCursor"]}
            more = await ask(package.schema, store, "acme", document, after)
            page = next(u for u in nodes(more["data"]["users"]) if u["userId"] == user["userId"])
            page = page["groups"]
        assert seen == user["groupIds"]  # each once, in the memberships' order
    read = await package.module("queries.membership").user_groups(
        Session(store, CODEC), "acme", users[0]["userId"], first=1
    )
    assert read.cursor == users[0]["groups"]["pageInfo"]["endCursor"]  # the query's own cursor

"""A smoke run of the API on DynamoDB Local: the same resolvers, transactions, cursors and
call counts as on the embedded store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from generated.runtime.plan import TableDef
from generated.runtime.store import Store
from generated.table import TABLE
from server.app import create_app
from server.auth import issue_token
from server.settings import Settings
from tests.server.conftest import Api

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
async def apis(
    store_factory: Callable[[str, TableDef], Awaitable[Store]], settings: Settings
) -> AsyncIterator[tuple[Api, Api]]:
    store = await store_factory("dynamodb-local", TABLE)
    transport = httpx.ASGITransport(app=create_app(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield (
            Api(client, issue_token(settings, "acme")),
            Api(client, issue_token(settings, "globex")),
        )


async def test_smoke_on_dynamodb_local(apis: tuple[Api, Api]) -> None:
    acme, globex = apis
    users = [await acme.create_user(f"u{i}@example.org", f"U{i}") for i in range(3)]
    assert await acme.codes(
        'mutation { createUser(input: {email: "U0@example.org", name: "Dup"}) { id } }'
    ) == ["CONFLICT"]
    orders = [await acme.create_order(u["id"], [("A", 2, 50), ("B", 1, 25)]) for u in users]
    assert {o["totalCents"] for o in orders} == {125}

    nested = """{ users(first: 3) { edges { node { email
      orders(first: 5) { edges { node { totalCents items { sku } user { id } } } } } } } }"""
    body = await acme(nested)
    edges = body["data"]["users"]["edges"]
    assert [e["node"]["email"] for e in edges] == [u["email"] for u in users]
    assert all(len(e["node"]["orders"]["edges"]) == 1 for e in edges)
    assert body["extensions"] == {"storeCalls": 1 + 3 + 1, "storeWaves": 3}

    changed = await acme.data(
        """mutation($id: ID!) { updateOrderStatus(input: {id: $id, status: SHIPPED,
           expectedVersion: 1}) { status version } }""",
        {"id": orders[0]["id"]},
    )
    assert changed["updateOrderStatus"] == {"status": "SHIPPED", "version": 2}
    stale = """mutation($id: ID!) { updateOrderStatus(input: {id: $id, status: PAID,
               expectedVersion: 1}) { status } }"""
    assert await acme.codes(stale, {"id": orders[0]["id"]}) == ["CONFLICT"]
    shipped = await acme.data("{ ordersByStatus(status: SHIPPED) { edges { node { id } } } }")
    assert [e["node"]["id"] for e in shipped["ordersByStatus"]["edges"]] == [orders[0]["id"]]

    group = await acme.create_group("G")
    await acme.add_member(group["id"], users[0]["id"])
    await acme.add_member(group["id"], users[0]["id"])
    members = await acme.data(
        "query($id: ID!) { group(id: $id) { members { edges { node { id } } } } }",
        {"id": group["id"]},
    )
    assert [e["node"]["id"] for e in members["group"]["members"]["edges"]] == [users[0]["id"]]

    page = await acme.data("{ users(first: 2) { pageInfo { hasNextPage endCursor } } }")
    cursor = page["users"]["pageInfo"]["endCursor"]
    rest = await acme.data(
        "query($a: String) { users(first: 2, after: $a) { edges { node { id } } } }",
        {"a": cursor},
    )
    assert [e["node"]["id"] for e in rest["users"]["edges"]] == [users[2]["id"]]
    query = "query($a: String) { users(first: 2, after: $a) { edges { node { id } } } }"
    assert await globex.codes(query, {"a": cursor}) == ["INVALID_CURSOR"]
    assert (await globex.data("{ users { edges { node { id } } } }"))["users"]["edges"] == []

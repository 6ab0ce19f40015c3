"""A smoke run of the API on DynamoDB Local: the same resolvers, transactions, cursors and
call counts as on the embedded store."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from generated.table import TABLE
from keygraph.plan import TableDef
from keygraph.store import Store
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET, DynamoDBLocal
from server.auth.tokens import issue_token
from server.cli import main
from server.settings import Settings
from tests.server.conftest import Api, app_of, store_counts

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
async def apis(
    store_factory: Callable[[str, TableDef], Awaitable[Store]], settings: Settings
) -> AsyncIterator[tuple[Api, Api]]:
    store = await store_factory("dynamodb-local", TABLE)
    transport = httpx.ASGITransport(app=app_of(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield (
            Api(client, issue_token(settings, "acme", roles=["admin"])),
            Api(client, issue_token(settings, "globex", roles=["admin"])),
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
    # the users' page, then each one's orders (an order holds its lines and its user's id)
    assert store_counts(body) == {"storeCalls": 1 + 3, "storeWaves": 2}

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


def test_table_commands_on_dynamodb_local(
    dynamodb_local: DynamoDBLocal,
    dynamodb_client: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = f"kg_cli_{uuid.uuid4().hex[:12]}"
    for variable, value in {
        "KEYGRAPH_STORE": "dynamodb",
        "KEYGRAPH_DYNAMODB_ENDPOINT": dynamodb_local.endpoint_url,
        "KEYGRAPH_TABLE": name,
        "KEYGRAPH_REGION": LOCAL_REGION,
        "KEYGRAPH_JWT_SECRET": "s" * 40,
        "AWS_ACCESS_KEY_ID": LOCAL_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": LOCAL_SECRET,
    }.items():
        monkeypatch.setenv(variable, value)
    try:
        assert main(["table", "plan"]) == 0
        assert "1. create the table with every index" in capsys.readouterr().out
        assert main(["table", "create"]) == 0
        assert main(["table", "create"]) == 0
        assert capsys.readouterr().out.splitlines() == [
            f"created table {name}",
            f"table {name} exists",
        ]
        assert main(["table", "plan"]) == 0
        assert "nothing to do" in capsys.readouterr().out
        assert main(["table", "describe"]) == 0
        described = json.loads(capsys.readouterr().out)
        assert described["name"] == name
        assert sorted(described["indexes"]) == ["GSI1", "GSI2"]
    finally:
        if admin.describe(dynamodb_client, name):
            admin.delete_table(dynamodb_client, name)

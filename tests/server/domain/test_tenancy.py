"""Tenant isolation: two tenants with overlapping data; whatever one tenant sends with the
other's ids, emails, cursors or node ids, it sees and changes nothing of the other's."""

from __future__ import annotations

from typing import Any

import pytest

from tests.server.conftest import USER_FIELDS, Api

SNAPSHOT = f"""{{ users {{ edges {{ node {{ {USER_FIELDS}
  orders {{ edges {{ node {{ id status version totalCents }} }} }}
  groups {{ edges {{ node {{ id name members {{ edges {{ node {{ id }} }} }} }} }} }} }} }} }}
  pending: ordersByStatus(status: PENDING) {{ edges {{ node {{ id }} }} }}
  paid: ordersByStatus(status: PAID) {{ edges {{ node {{ id }} }} }} }}"""


async def _populate(api: Api, name: str) -> dict[str, Any]:
    """Users with the same emails in both tenants, each with orders and a group."""
    users = [await api.create_user(f"shared{i}@example.org", f"{name} {i}") for i in range(3)]
    orders = [await api.create_order(user["id"], [("SKU", 2, 300)]) for user in users]
    group = await api.create_group(f"{name} group")
    for user in users:
        await api.add_member(group["id"], user["id"])
    page = await api.data("{ users(first: 1) { pageInfo { endCursor } } }")
    return {
        "users": users,
        "orders": orders,
        "group": group,
        "users_cursor": page["users"]["pageInfo"]["endCursor"],
    }


@pytest.fixture
async def both(acme: Api, globex: Api) -> tuple[dict[str, Any], dict[str, Any]]:
    return await _populate(acme, "Acme"), await _populate(globex, "Globex")


async def test_reads_with_the_other_tenants_ids_find_nothing(
    acme: Api, globex: Api, both: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    theirs = both[0]
    ids = [u["id"] for u in theirs["users"]] + [o["id"] for o in theirs["orders"]]
    ids.append(theirs["group"]["id"])
    for global_id in ids:
        data = await globex.data(
            """query($id: ID!) { node(id: $id) { id } user(id: $id) { id }
               order(id: $id) { id } group(id: $id) { id } }""",
            {"id": global_id},
        )
        assert data == {"node": None, "user": None, "order": None, "group": None}


async def test_listings_show_only_the_callers_tenant(
    acme: Api, globex: Api, both: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    mine, theirs = both[1], both[0]
    snapshot = await globex.data(SNAPSHOT)
    users = [edge["node"] for edge in snapshot["users"]["edges"]]
    assert [u["id"] for u in users] == [u["id"] for u in mine["users"]]
    assert {u["name"] for u in users} == {"Globex 0", "Globex 1", "Globex 2"}
    pending = {edge["node"]["id"] for edge in snapshot["pending"]["edges"]}
    assert pending == {o["id"] for o in mine["orders"]}
    assert pending.isdisjoint(o["id"] for o in theirs["orders"])
    by_email = await globex.data('{ userByEmail(email: "shared0@example.org") { id name } }')
    assert by_email["userByEmail"] == {"id": mine["users"][0]["id"], "name": "Globex 0"}


async def test_cursors_of_the_other_tenant_are_invalid(
    acme: Api, globex: Api, both: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    theirs = both[0]
    users = "query($a: String) { users(first: 1, after: $a) { edges { node { id } } } }"
    by_status = """query($a: String) {
      ordersByStatus(status: PENDING, first: 1, after: $a) { edges { node { id } } } }"""
    members = """query($g: ID!, $a: String) {
      group(id: $g) { members(first: 1, after: $a) { edges { node { id } } } } }"""
    status_page = await acme.data(
        "{ ordersByStatus(status: PENDING, first: 1) { pageInfo { endCursor } } }"
    )
    status_cursor = status_page["ordersByStatus"]["pageInfo"]["endCursor"]
    members_page = await acme.data(
        "query($g: ID!) { group(id: $g) { members(first: 1) { pageInfo { endCursor } } } }",
        {"g": theirs["group"]["id"]},
    )
    members_cursor = members_page["group"]["members"]["pageInfo"]["endCursor"]
    own_group = both[1]["group"]["id"]
    attempts: list[tuple[str, dict[str, Any], str]] = [
        (users, {"a": theirs["users_cursor"]}, "users"),
        (by_status, {"a": status_cursor}, "ordersByStatus"),
        (members, {"g": own_group, "a": members_cursor}, "group"),
    ]
    for query, variables, field in attempts:
        assert await globex.codes(query, variables) == ["INVALID_CURSOR"], field
        # the owner's own cursor still works for the owner
        owner = {**variables, "g": theirs["group"]["id"]} if "g" in variables else variables
        assert (await acme.data(query, owner))[field]


async def test_mutations_on_the_other_tenants_data_are_not_found_and_change_nothing(
    acme: Api, globex: Api, both: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    theirs, mine = both
    before = await acme.data(SNAPSHOT)
    user, order, group = theirs["users"][0], theirs["orders"][0], theirs["group"]
    attempts: list[tuple[str, dict[str, Any]]] = [
        (
            "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id } }",
            {"i": {"id": user["id"], "expectedVersion": 1, "name": "Hijacked"}},
        ),
        (
            "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }",
            {
                "i": {
                    "userId": user["id"],
                    "currency": "EUR",
                    "items": [{"sku": "X", "name": "X", "quantity": 1, "unitPriceCents": 1}],
                }
            },
        ),
        (
            "mutation($i: UpdateOrderStatusInput!) { updateOrderStatus(input: $i) { id } }",
            {"i": {"id": order["id"], "status": "CANCELLED", "expectedVersion": 1}},
        ),
        (
            "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }",
            {"g": group["id"], "u": user["id"]},
        ),
        (
            "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }",
            {"g": mine["group"]["id"], "u": user["id"]},
        ),
        (
            "mutation($g: ID!, $u: ID!) { removeGroupMember(groupId: $g, userId: $u) { id } }",
            {"g": group["id"], "u": user["id"]},
        ),
    ]
    for query, variables in attempts:
        assert await globex.codes(query, variables) == ["NOT_FOUND"], query
    assert await acme.data(SNAPSHOT) == before


async def test_an_email_taken_in_one_tenant_is_free_in_the_other(
    acme: Api, globex: Api, both: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    await acme.create_user("only-acme@example.org")
    assert (await globex.data('{ userByEmail(email: "only-acme@example.org") { id } }')) == {
        "userByEmail": None
    }
    assert (await globex.create_user("only-acme@example.org"))["email"] == "only-acme@example.org"


async def test_cursor_tampering_is_invalid_cursor(
    acme: Api, both: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    mine = both[0]
    cursor = mine["users_cursor"]
    body, mac = cursor.split(".")
    flipped = body[:-1] + ("A" if body[-1] != "A" else "B")
    users = "query($a: String) { users(first: 1, after: $a) { edges { node { id } } } }"
    for bad in (f"{flipped}.{mac}", f"{body}.{mac[:-2]}", "garbage", f"{body}.{mac}.x", ""):
        assert await acme.codes(users, {"a": bad}) == ["INVALID_CURSOR"], bad
    # a cursor of one pattern or argument set is refused by another
    orders = """query($id: ID!, $a: String) { user(id: $id) {
      orders(first: 1, after: $a) { edges { node { id } } } } }"""
    assert await acme.codes(orders, {"id": mine["users"][0]["id"], "a": cursor}) == [
        "INVALID_CURSOR"
    ]
    await acme.create_order(mine["users"][0]["id"], [("A", 1, 1)])
    first_page = await acme.data(
        "query($id: ID!) { user(id: $id) { orders(first: 1) { pageInfo { endCursor } } } }",
        {"id": mine["users"][0]["id"]},
    )
    own = first_page["user"]["orders"]["pageInfo"]["endCursor"]
    assert own is not None
    other_user = mine["users"][1]["id"]
    assert await acme.codes(orders, {"id": other_user, "a": own}) == ["INVALID_CURSOR"]
    between = """query($id: ID!, $a: String) { user(id: $id) {
      orders(first: 1, after: $a, from: "2000-01-01T00:00:00Z") { edges { node { id } } } } }"""
    assert await acme.codes(between, {"id": mine["users"][0]["id"], "a": own}) == ["INVALID_CURSOR"]

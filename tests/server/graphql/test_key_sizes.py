"""Ids and values too long for a DynamoDB key (a partition key holds 2,048 bytes, a sort key
1,024) are BAD_USER_INPUT, on reads and writes alike: never INTERNAL, and nothing is written.
Run on both stores."""

from __future__ import annotations

from typing import Any

from keygraph.plan import Item, Scan
from keygraph.store import Store
from tests.ids import to_global_id
from tests.server.conftest import Api

LONG_USER = to_global_id("User", "u" * 5000)
LONG_GROUP = to_global_id("Group", "g" * 5000)
LONG_ORDER = to_global_id("Order", "#" * 2000)
"""Escaping makes each "#" three bytes: 6,000 in the key."""
LONG_PATH = ["N" * 60] * 31
LONG_NODE = to_global_id("OrgNode", ".".join(LONG_PATH))
"""The id of an org node too deep for its key: its path joined with dots."""
LONG_EMAIL = "e" * 2990 + "@example.org"


async def everything(store: Store) -> list[Item]:
    """Every item of the table, in key order."""
    items: list[Item] = []
    start = None
    while True:
        page = await store.scan(Scan(start=start))
        items += page.items
        if page.last_key is None:
            return sorted(items, key=lambda item: (item["PK"], item["SK"]))
        start = page.last_key


READS: list[tuple[str, dict[str, Any]]] = [
    ("query($id: ID!) { user(id: $id) { id } }", {"id": LONG_USER}),
    ("query($id: ID!) { node(id: $id) { id } }", {"id": LONG_USER}),
    ("query($id: ID!) { order(id: $id) { id } }", {"id": LONG_ORDER}),
    ("query($id: ID!) { node(id: $id) { id } }", {"id": LONG_ORDER}),
    ("query($id: ID!) { group(id: $id) { id } }", {"id": LONG_GROUP}),
    ("query($id: ID!) { orgNode(id: $id) { id } }", {"id": LONG_NODE}),
    ("query($id: ID!) { node(id: $id) { id } }", {"id": LONG_NODE}),
    ("query($e: String!) { userByEmail(email: $e) { id } }", {"e": LONG_EMAIL}),
]


async def test_reads_by_an_over_long_id_are_bad_user_input(
    store_and_api: tuple[Store, Api],
) -> None:
    _, api = store_and_api
    for query, variables in READS:
        body = await api(query, variables)
        codes = [error["extensions"]["code"] for error in body["errors"]]
        assert codes == ["BAD_USER_INPUT"], (query, body["errors"])
        assert "too long" in body["errors"][0]["message"]


async def test_writes_naming_an_over_long_id_are_refused_and_write_nothing(
    store_and_api: tuple[Store, Api],
) -> None:
    store, api = store_and_api
    user = await api.create_user("ann@example.org", "Ann")
    group = await api.create_group("G")
    root = await api.data('mutation { createOrgNode(input: {name: "Root"}) { id } }')
    root_id = root["createOrgNode"]["id"]
    before = await everything(store)
    items = [{"sku": "A", "name": "A", "quantity": 1, "unitPriceCents": 100}]
    writes: list[tuple[str, dict[str, Any]]] = [
        (
            "mutation($id: ID!) { updateUser(input: {id: $id, expectedVersion: 1, "
            'name: "X"}) { id } }',
            {"id": LONG_USER},
        ),
        (
            "mutation($id: ID!, $e: String!) { updateUser(input: {id: $id, "
            "expectedVersion: 1, email: $e}) { id } }",
            {"id": user["id"], "e": LONG_EMAIL},
        ),
        (
            "mutation($id: ID!) { deleteUser(input: {id: $id, expectedVersion: 1}) { deletedId } }",
            {"id": LONG_USER},
        ),
        (
            "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }",
            {"g": group["id"], "u": LONG_USER},
        ),
        (
            "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }",
            {"g": LONG_GROUP, "u": user["id"]},
        ),
        (
            "mutation($g: ID!, $u: ID!) { removeGroupMember(groupId: $g, userId: $u) { id } }",
            {"g": group["id"], "u": LONG_USER},
        ),
        (
            "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }",
            {"i": {"userId": LONG_USER, "currency": "EUR", "items": items}},
        ),
        (
            "mutation($id: ID!) { updateOrderStatus(input: {id: $id, status: PAID, "
            "expectedVersion: 1}) { id } }",
            {"id": LONG_ORDER},
        ),
        (
            "mutation($id: ID!, $p: ID) { moveOrgNode(input: {id: $id, expectedVersion: 1, "
            "newParentId: $p}) { complete } }",
            {"id": LONG_NODE, "p": root_id},
        ),
        (
            "mutation($id: ID!, $p: ID) { moveOrgNode(input: {id: $id, expectedVersion: 1, "
            "newParentId: $p}) { complete } }",
            {"id": root_id, "p": LONG_NODE},
        ),
        (
            'mutation($p: ID) { createOrgNode(input: {name: "N", parentId: $p}) { id } }',
            {"p": LONG_NODE},
        ),
        (
            "mutation($id: ID!) { deleteOrgNode(input: {id: $id, expectedVersion: 1}) "
            "{ complete } }",
            {"id": LONG_NODE},
        ),
    ]
    for query, variables in writes:
        body = await api(query, variables)
        codes = [error["extensions"]["code"] for error in body["errors"]]
        assert codes == ["BAD_USER_INPUT"], (query, body["errors"])
    assert await everything(store) == before

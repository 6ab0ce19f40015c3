"""Every mutation x every kind of caller, on both stores: the answer written out, and a
refused mutation is FORBIDDEN before any store call (so before any write)."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.server.authz.conftest import CALLERS, Tenant, local_id, served_schema
from tests.server.conftest import Api

Case = tuple[str, dict[str, Any]]
_serial = itertools.count()

OWNER_OR_ADMIN = {"admin", "owner", "no_roles_claim"}
ADMIN = {"admin"}


async def _user(admin: Api, name: str) -> dict[str, Any]:
    return await admin.create_user(f"{name}-{next(_serial)}@example.org", name)


async def _address(admin: Api, user_id: str) -> dict[str, Any]:
    data = await admin.data(
        """mutation($i: AddAddressInput!) { addAddress(input: $i) { address { id version } } }""",
        {
            "i": {
                "userId": user_id,
                "label": "home",
                "line1": "1 Road",
                "city": "Town",
                "postalCode": "12345",
                "country": "DE",
            }
        },
    )
    address: dict[str, Any] = data["addAddress"]["address"]
    return address


async def _org_node(admin: Api) -> dict[str, Any]:
    data = await admin.data('mutation { createOrgNode(input: {name: "eng"}) { id version } }')
    node: dict[str, Any] = data["createOrgNode"]
    return node


async def _shop(admin: Api) -> dict[str, Any]:
    data = await admin.data(
        'mutation { createShop(input: {name: "s", lat: 52.5, lng: 13.4}) { id version } }'
    )
    shop: dict[str, Any] = data["createShop"]
    return shop


async def create_user(admin: Api, ann: dict[str, Any]) -> Case:
    email = f"new-{next(_serial)}@example.org"
    return "mutation($i: CreateUserInput!) { createUser(input: $i) { id } }", {
        "i": {"email": email, "name": "New"}
    }


async def update_user(admin: Api, ann: dict[str, Any]) -> Case:
    return "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id name } }", {
        "i": {"id": ann["id"], "expectedVersion": ann["version"], "name": "Renamed"}
    }


async def delete_user(admin: Api, ann: dict[str, Any]) -> Case:
    return "mutation($i: DeleteInput!) { deleteUser(input: $i) { deletedId } }", {
        "i": {"id": ann["id"], "expectedVersion": ann["version"]}
    }


async def add_address(admin: Api, ann: dict[str, Any]) -> Case:
    fields = {"label": "work", "line1": "2 Road", "city": "C", "postalCode": "1", "country": "FR"}
    return "mutation($i: AddAddressInput!) { addAddress(input: $i) { address { id } } }", {
        "i": {"userId": ann["id"], **fields}
    }


async def update_address(admin: Api, ann: dict[str, Any]) -> Case:
    address = await _address(admin, ann["id"])
    return "mutation($i: UpdateAddressInput!) { updateAddress(input: $i) { address { id } } }", {
        "i": {"id": address["id"], "expectedVersion": address["version"], "city": "Elsewhere"}
    }


async def remove_address(admin: Api, ann: dict[str, Any]) -> Case:
    address = await _address(admin, ann["id"])
    return "mutation($i: RemoveAddressInput!) { removeAddress(input: $i) { deletedId } }", {
        "i": {"id": address["id"], "expectedVersion": address["version"]}
    }


async def create_order(admin: Api, ann: dict[str, Any]) -> Case:
    line = {"sku": "A", "name": "a", "quantity": 1, "unitPriceCents": 100}
    return "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }", {
        "i": {"userId": ann["id"], "currency": "EUR", "items": [line]}
    }


async def update_order_status(admin: Api, ann: dict[str, Any]) -> Case:
    order = await admin.create_order(ann["id"], [("A", 1, 100)])
    query = "mutation($i: UpdateOrderStatusInput!) { updateOrderStatus(input: $i) { id } }"
    return query, {"i": {"id": order["id"], "status": "PAID", "expectedVersion": 1}}


async def delete_order(admin: Api, ann: dict[str, Any]) -> Case:
    order = await admin.create_order(ann["id"], [("A", 1, 100)])
    return "mutation($i: DeleteInput!) { deleteOrder(input: $i) { deletedId } }", {
        "i": {"id": order["id"], "expectedVersion": 1}
    }


async def create_group(admin: Api, ann: dict[str, Any]) -> Case:
    return 'mutation { createGroup(input: {name: "g"}) { id } }', {}


async def add_group_member(admin: Api, ann: dict[str, Any]) -> Case:
    group = await admin.create_group("g")
    query = "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }"
    return query, {"g": group["id"], "u": ann["id"]}


async def remove_group_member(admin: Api, ann: dict[str, Any]) -> Case:
    group = await admin.create_group("g")
    await admin.add_member(group["id"], ann["id"])
    query = "mutation($g: ID!, $u: ID!) { removeGroupMember(groupId: $g, userId: $u) { id } }"
    return query, {"g": group["id"], "u": ann["id"]}


async def delete_group(admin: Api, ann: dict[str, Any]) -> Case:
    group = await admin.create_group("g")
    return "mutation($i: DeleteInput!) { deleteGroup(input: $i) { deletedId } }", {
        "i": {"id": group["id"], "expectedVersion": 1}
    }


async def create_org_node(admin: Api, ann: dict[str, Any]) -> Case:
    return 'mutation { createOrgNode(input: {name: "ops"}) { id } }', {}


async def delete_org_node(admin: Api, ann: dict[str, Any]) -> Case:
    node = await _org_node(admin)
    return "mutation($i: DeleteOrgNodeInput!) { deleteOrgNode(input: $i) { deletedId } }", {
        "i": {"id": node["id"], "expectedVersion": node["version"]}
    }


async def move_org_node(admin: Api, ann: dict[str, Any]) -> Case:
    node, parent = await _org_node(admin), await _org_node(admin)
    query = "mutation($i: MoveOrgNodeInput!) { moveOrgNode(input: $i) { node { id } } }"
    return query, {
        "i": {"id": node["id"], "expectedVersion": node["version"], "newParentId": parent["id"]}
    }


async def create_shop(admin: Api, ann: dict[str, Any]) -> Case:
    return 'mutation { createShop(input: {name: "s", lat: 1, lng: 2}) { id } }', {}


async def move_shop(admin: Api, ann: dict[str, Any]) -> Case:
    shop = await _shop(admin)
    return "mutation($i: MoveShopInput!) { moveShop(input: $i) { id } }", {
        "i": {"id": shop["id"], "expectedVersion": shop["version"], "lat": 3, "lng": 4}
    }


async def delete_shop(admin: Api, ann: dict[str, Any]) -> Case:
    shop = await _shop(admin)
    return "mutation($i: DeleteInput!) { deleteShop(input: $i) { deletedId } }", {
        "i": {"id": shop["id"], "expectedVersion": shop["version"]}
    }


Setup = Callable[[Api, dict[str, Any]], Awaitable[Case]]
MATRIX: list[tuple[Setup, set[str]]] = [
    (create_user, ADMIN),
    (update_user, OWNER_OR_ADMIN),
    (delete_user, OWNER_OR_ADMIN),
    (add_address, OWNER_OR_ADMIN),
    (update_address, OWNER_OR_ADMIN),
    (remove_address, OWNER_OR_ADMIN),
    (create_order, OWNER_OR_ADMIN),
    (update_order_status, ADMIN),
    (delete_order, ADMIN),
    (create_group, ADMIN),
    (add_group_member, OWNER_OR_ADMIN),
    (remove_group_member, OWNER_OR_ADMIN),
    (delete_group, ADMIN),
    (create_org_node, ADMIN),
    (delete_org_node, ADMIN),
    (move_org_node, ADMIN),
    (create_shop, ADMIN),
    (move_shop, ADMIN),
    (delete_shop, ADMIN),
]


def test_the_matrix_has_every_mutation_of_the_schema() -> None:
    schema = served_schema()
    assert schema.mutation_type is not None
    names = {name.lower() for name in schema.mutation_type.fields}
    assert {setup.__name__.replace("_", "") for setup, _ in MATRIX} == names


@pytest.mark.parametrize(("setup", "allowed"), MATRIX, ids=[s.__name__ for s, _ in MATRIX])
async def test_who_may_make_each_mutation(tenant: Tenant, setup: Setup, allowed: set[str]) -> None:
    answers: dict[str, str] = {}
    for caller in CALLERS:
        ann, bob = await _user(tenant.admin, "ann"), await _user(tenant.admin, "bob")
        query, variables = await setup(tenant.admin, ann)
        api = tenant.as_(caller, local_id(ann["id"]), local_id(bob["id"]))
        body = await api(query, variables)
        if "errors" not in body:
            answers[caller] = "ok"
            continue
        codes = [error["extensions"]["code"] for error in body["errors"]]
        answers[caller] = codes[0]
        if codes == ["FORBIDDEN"]:
            assert body["data"] is None
            assert body["extensions"]["storeCalls"] == 0, (caller, body)
    assert answers == {c: "ok" if c in allowed else "FORBIDDEN" for c in CALLERS}

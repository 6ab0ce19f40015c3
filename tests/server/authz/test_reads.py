"""Every field of the schema's queries x every kind of caller, on both stores: who reads
what, written out. A refused field is null with FORBIDDEN at its path and the rest stands;
what the arguments settle is decided before any store call; lists never come back short."""

from __future__ import annotations

from typing import Any

import graphql
import pytest

from tests.server.authz.conftest import CALLERS, Tenant, local_id, served_schema
from tests.server.conftest import store_counts
from tests.server.reachable import reachable

NOT_ADMIN = ("owner", "other", "no_roles_claim", "unknown_role")
NOT_OWNER = ("other", "unknown_role")

USER = "id userId name createdAt version groupIds"
ORDER = (
    "id orderId userId status totalCents currency createdAt version "
    "items { sku name quantity unitPriceCents }"
)
ADDRESS = (
    "id addressId userId label line1 line2 city postalCode country createdAt version isDefault"
)
ORG = (
    "id nodeId path parentRef name depth createdAt version moving childCount "
    "parent { id } children { id } ancestors { id }"
)
MEMBERSHIPS = (
    "edges { cursor node { id userId groupId joinedAt user { id } group { id } } } "
    "pageInfo { hasNextPage endCursor }"
)
SHOP = "id shopId name lat lng geohash geoCell createdAt version"
ORG_MORE = (
    "descendants(first: 5) { edges { cursor node { id } } "
    "pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }"
)

# name -> (query, refused): `refused` maps each caller to the paths answered null with
# FORBIDDEN (every other caller reads the whole answer, without errors). Paths use $ann,
# the owner's user ($annId its user id, as the spec's patterns take it, as $groupId is
# $group's); $bob, the other's; ids come in as variables.
PROBES: dict[str, tuple[str, dict[str, list[str]]]] = {
    "viewer": ("{ viewer { tenant subject roles } }", {}),
    "user": (
        f"query($ann: ID!) {{ user(id: $ann) {{ {USER} "
        "groups { edges { cursor node { id name createdAt version } } "
        "pageInfo { hasNextPage endCursor } } } }",
        {"unknown_role": ["user"]},
    ),
    "user.email": (
        "query($ann: ID!) { user(id: $ann) { id email } }",
        {"other": ["user.email"], "unknown_role": ["user"]},
    ),
    "user.addresses": (
        f"query($ann: ID!) {{ user(id: $ann) {{ id addresses {{ {ADDRESS} }} }} }}",
        {"other": ["user.addresses"], "unknown_role": ["user"]},
    ),
    "user.defaultAddress": (
        "query($ann: ID!) { user(id: $ann) { id defaultAddress { id } } }",
        {"other": ["user.defaultAddress"], "unknown_role": ["user"]},
    ),
    "user.defaultAddressId": (
        "query($ann: ID!) { user(id: $ann) { id defaultAddressId } }",
        {"other": ["user.defaultAddressId"], "unknown_role": ["user"]},
    ),
    "user.memberships": (
        f"query($ann: ID!) {{ user(id: $ann) {{ id memberships {{ {MEMBERSHIPS} }} }} }}",
        {"unknown_role": ["user"]},
    ),
    "user.orders": (
        f"query($ann: ID!) {{ user(id: $ann) {{ id orders {{ edges {{ cursor node {{ {ORDER} "
        "user { id email } } } pageInfo { hasNextPage endCursor } } } }",
        {"other": ["user.orders"], "unknown_role": ["user"]},
    ),
    "user.orders.between": (
        'query($ann: ID!) { user(id: $ann) { id orders(from: "2000-01-01T00:00:00Z", '
        'to: "2999-01-01T00:00:00Z") { edges { node { id } } } } }',
        {"other": ["user.orders"], "unknown_role": ["user"]},
    ),
    "userOrders": (
        "query($annId: ID!) { userOrders(userId: $annId) "
        f"{{ edges {{ cursor node {{ {ORDER} }} }} pageInfo {{ hasNextPage endCursor }} }} }}",
        {caller: ["userOrders"] for caller in NOT_OWNER},
    ),
    "userOrdersBetween": (
        'query($annId: ID!) { userOrdersBetween(userId: $annId, from: "2000-01-01T00:00:00Z", '
        'to: "2999-01-01T00:00:00Z") { edges { node { id } } } }',
        {caller: ["userOrdersBetween"] for caller in NOT_OWNER},
    ),
    "userGroups": (
        f"query($annId: ID!) {{ userGroups(userId: $annId) {{ {MEMBERSHIPS} }} }}",
        {"unknown_role": ["userGroups"]},
    ),
    "userWithAddresses": (
        "query($annId: ID!) { userWithAddresses(userId: $annId) { edges { cursor node { "
        "... on User { id name } ... on Address { id city } } } pageInfo { hasNextPage } } }",
        {caller: ["userWithAddresses"] for caller in NOT_OWNER},
    ),
    "userByEmail": (
        "query($email: String!) { userByEmail(email: $email) { id } }",
        {caller: ["userByEmail"] for caller in NOT_ADMIN},
    ),
    "users": (
        f"{{ users(first: 10) {{ edges {{ cursor node {{ {USER} }} }} "
        "pageInfo { hasNextPage endCursor } } }",
        {"unknown_role": ["users"]},
    ),
    "users.email": (
        # oldest first: ann, then bob; the root admin is no user
        "{ users(first: 10) { edges { node { id email } } } }",
        {
            "owner": ["users.edges.1.node.email"],
            "other": ["users.edges.0.node.email"],
            "no_roles_claim": ["users.edges.1.node.email"],
            "unknown_role": ["users"],
        },
    ),
    "order": (
        f"query($order: ID!) {{ order(id: $order) {{ {ORDER} user {{ id }} }} }}",
        {caller: ["order"] for caller in NOT_ADMIN},
    ),
    "ordersByStatus": (
        "{ ordersByStatus(status: PENDING, first: 5) { edges { node { id } } } }",
        {caller: ["ordersByStatus"] for caller in NOT_ADMIN},
    ),
    "group": (
        "query($group: ID!) { group(id: $group) { id groupId name createdAt version "
        "members(first: 5) { edges { cursor node { id name } } pageInfo { hasNextPage } } } }",
        {"unknown_role": ["group"]},
    ),
    "groupMembers": (
        f"query($groupId: ID!) {{ groupMembers(groupId: $groupId) {{ {MEMBERSHIPS} }} }}",
        {"unknown_role": ["groupMembers"]},
    ),
    "orgNode": (
        f"query($child: ID!) {{ orgNode(id: $child) {{ {ORG} {ORG_MORE} }} }}",
        {"unknown_role": ["orgNode"]},
    ),
    "orgRoots": (f"{{ orgRoots {{ {ORG} }} }}", {"unknown_role": ["orgRoots"]}),
    "orgSubtree": (
        "query($path: [String!]!) { orgSubtree(path: $path) { edges { cursor node { id } } "
        "pageInfo { hasNextPage endCursor } } }",
        {"unknown_role": ["orgSubtree"]},
    ),
    "shop": (
        f"query($shop: ID!) {{ shop(id: $shop) {{ {SHOP} }} }}",
        {"unknown_role": ["shop"]},
    ),
    "shopsInCell": (
        "query($cell: String!, $low: String!, $high: String!) { shopsInCell(geoCell: $cell, "
        f"geohashFrom: $low, geohashTo: $high) {{ edges {{ cursor node {{ {SHOP} }} }} "
        "pageInfo { hasNextPage } } }",
        {"unknown_role": ["shopsInCell"]},
    ),
    "shopsNear": (
        "{ shopsNear(lat: 52.52, lng: 13.405, radiusKm: 5) { distanceKm shop { id name } } }",
        {"unknown_role": ["shopsNear"]},
    ),
    "node.user": (
        "query($ann: ID!) { node(id: $ann) { id ... on User { name } } }",
        {"unknown_role": ["node"]},
    ),
    "node.order": (
        "query($order: ID!) { node(id: $order) { id } }",
        {caller: ["node"] for caller in NOT_ADMIN},
    ),
    "node.address": (
        "query($address: ID!) { node(id: $address) { id ... on Address { city } } }",
        {"other": ["node"], "unknown_role": ["node"]},
    ),
    "node.group": ("query($group: ID!) { node(id: $group) { id } }", {"unknown_role": ["node"]}),
    "node.orgNode": ("query($child: ID!) { node(id: $child) { id } }", {"unknown_role": ["node"]}),
    "node.shop": ("query($shop: ID!) { node(id: $shop) { id } }", {"unknown_role": ["node"]}),
}


async def _world(tenant: Tenant) -> dict[str, Any]:
    """ann and bob (oldest first), each with an order, an address (the default) and a
    membership of one group; an org root with a child; a shop. The variables' values."""
    admin = tenant.admin
    ann = await admin.create_user("ann@example.org", "Ann")
    bob = await admin.create_user("bob@example.org", "Bob")
    group = await admin.create_group("g")
    address = ""
    for user in (ann, bob):
        await admin.create_order(user["id"], [("A", 1, 100)])
        await admin.add_member(group["id"], user["id"])
        added = await admin.data(
            """mutation($i: AddAddressInput!) { addAddress(input: $i) { address { id } } }""",
            {
                "i": {
                    "userId": user["id"],
                    "label": "home",
                    "line1": "1 Road",
                    "city": "Town",
                    "postalCode": "1",
                    "country": "DE",
                    "makeDefault": True,
                }
            },
        )
        address = address or added["addAddress"]["address"]["id"]
    order = (
        await admin.data(
            "query($u: ID!) { user(id: $u) { orders { edges { node { id } } } } }", {"u": ann["id"]}
        )
    )["user"]["orders"]["edges"][0]["node"]["id"]
    root = (await admin.data('mutation { createOrgNode(input: {name: "eng"}) { id path } }'))[
        "createOrgNode"
    ]
    child = (
        await admin.data(
            'mutation($p: ID!) { createOrgNode(input: {name: "web", parentId: $p}) { id } }',
            {"p": root["id"]},
        )
    )["createOrgNode"]["id"]
    shop = (
        await admin.data(
            'mutation { createShop(input: {name: "s", lat: 52.52, lng: 13.405}) '
            "{ id geoCell geohash } }"
        )
    )["createShop"]
    return {
        "ann": ann["id"],
        "annId": local_id(ann["id"]),
        "bob": bob["id"],
        "email": "ann@example.org",
        "order": order,
        "address": address,
        "group": group["id"],
        "groupId": local_id(group["id"]),
        "child": child,
        "path": root["path"],
        "shop": shop["id"],
        "cell": shop["geoCell"],
        "low": shop["geohash"],
        "high": shop["geohash"] + "z",
    }


def _forbidden(body: dict[str, Any]) -> list[str]:
    """The paths of the answer's errors, each FORBIDDEN and null in the data."""
    paths = []
    for error in body.get("errors", []):
        assert error["extensions"]["code"] == "FORBIDDEN", error
        path = [str(part) for part in error["path"]]
        place: Any = body["data"]
        for part in path:
            place = place[int(part)] if isinstance(place, list) else place[part]
        assert place is None, error
        paths.append(".".join(path))
    return sorted(paths)


def _variables(query: str, values: dict[str, Any]) -> dict[str, Any]:
    document = graphql.parse(query)
    used = {
        definition.variable.name.value
        for operation in document.definitions
        if isinstance(operation, graphql.OperationDefinitionNode)
        for definition in operation.variable_definitions or ()
    }
    return {name: values[name] for name in used}


async def test_who_reads_each_field(tenant: Tenant) -> None:
    values = await _world(tenant)
    ann, bob = local_id(values["ann"]), local_id(values["bob"])
    answers: dict[tuple[str, str], list[str]] = {}
    for name, (query, _) in PROBES.items():
        for caller in CALLERS:
            body = await tenant.as_(caller, ann, bob)(query, _variables(query, values))
            answers[(name, caller)] = _forbidden(body)
            if caller == "unknown_role":  # refused everything, before reading anything
                assert store_counts(body)["storeCalls"] == 0, name
            if not answers[(name, caller)]:
                assert all(value is not None for value in body["data"].values()), (name, body)
    expected = {
        (name, caller): sorted(refused.get(caller, []))
        for name, (_, refused) in PROBES.items()
        for caller in CALLERS
    }
    assert answers == expected


def _fields_read(query: str, schema: graphql.GraphQLSchema) -> set[str]:
    info = graphql.TypeInfo(schema)
    found: set[str] = set()

    class Visitor(graphql.Visitor):
        def enter_field(self, node: graphql.FieldNode, *_: Any) -> None:
            parent = info.get_parent_type()
            if parent is not None and not node.name.value.startswith("__"):
                found.add(f"{parent.name}.{node.name.value}")

    graphql.visit(graphql.parse(query), graphql.TypeInfoVisitor(info, Visitor()))
    return found


def test_the_probes_read_every_field_of_the_queries() -> None:
    schema = served_schema()
    read = set().union(*(_fields_read(query, schema) for query, _ in PROBES.values()))
    payloads = {"AddressPayload", "DeletePayload", "MoveOrgNodePayload", "RemoveAddressPayload"}
    queried = reachable(schema, [schema.query_type])
    every = {
        f"{kind.name}.{field}"
        for kind in map(schema.get_type, queried)
        if isinstance(kind, graphql.GraphQLObjectType)
        and not kind.name.startswith("__")
        and kind.name not in payloads
        for field in kind.fields
    }
    assert every - read == set()


@pytest.mark.parametrize("caller", ["other", "unknown_role"])
async def test_what_the_arguments_settle_is_decided_before_any_store_call(
    tenant: Tenant, caller: str
) -> None:
    values = await _world(tenant)
    api = tenant.as_(caller, local_id(values["ann"]), local_id(values["bob"]))
    query = (
        "query($ann: ID!) { user(id: $ann) { name orders(first: 5) { edges { node { id } } } "
        "addresses { id } } }"
    )
    body = await api(query, {"ann": values["ann"]})
    # the other member reads the user (one GetItem) and nothing of its orders or addresses;
    # a caller with no known role is refused the user before reading anything
    calls = {"other": 1, "unknown_role": 0}[caller]
    assert store_counts(body)["storeCalls"] == calls
    admin = await tenant.admin(query, {"ann": values["ann"]})
    assert store_counts(admin)["storeCalls"] == 2  # the user with its addresses; its orders


async def test_a_list_never_comes_back_short_because_of_a_rule(tenant: Tenant) -> None:
    values = await _world(tenant)
    member = tenant.as_("owner", local_id(values["ann"]), local_id(values["bob"]))
    query = "{ users(first: 1) { edges { node { id email } } pageInfo { hasNextPage } } }"
    first = await member(query)
    assert len(first["data"]["users"]["edges"]) == 1
    assert first["data"]["users"]["pageInfo"]["hasNextPage"] is True
    everyone = await member("{ users(first: 10) { edges { node { id email } } } }")
    admins = await tenant.admin.data("{ users(first: 10) { edges { node { id } } } }")
    ids = [edge["node"]["id"] for edge in everyone["data"]["users"]["edges"]]
    assert ids == [edge["node"]["id"] for edge in admins["users"]["edges"]]


async def test_a_cursor_is_its_callers_own(tenant: Tenant) -> None:
    values = await _world(tenant)
    query = (
        "query($after: String) { users(first: 1, after: $after) "
        "{ edges { node { id } } pageInfo { endCursor } } }"
    )
    page = await tenant.admin.data(query)
    cursor = page["users"]["pageInfo"]["endCursor"]
    again = await tenant.admin.data(query, {"after": cursor})
    assert again["users"]["edges"][0]["node"]["id"] == values["bob"]
    for caller in ("owner", "other"):
        api = tenant.as_(caller, local_id(values["ann"]), local_id(values["bob"]))
        assert await api.codes(query, {"after": cursor}) == ["INVALID_CURSOR"]

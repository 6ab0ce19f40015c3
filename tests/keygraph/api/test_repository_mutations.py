"""schema.graphql's mutations on the API compiled from the spec: every one, sent as a client
sends it to `keygraph serve --package generated --extend server.extension`, answers the data
and refuses with the codes the hand-written server did (recorded in recorded/mutations.json,
tests/keygraph/api/recordings.py), through a user's, an order's, a group's, an org tree's
and a shop's life; hostile ids, stale versions and another role's callers are refused as
there; and each is declared as the hand-written server declared it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx

from generated import authz
from generated.api import API
from generated.table import TABLE
from keygraph.api import executable
from keygraph.serve import create_app as serve_app
from keygraph.serve.package import extension_at, served
from keygraph.store import Store
from keygraph.tokens import issue
from tests.conftest import StoreFactory
from tests.keygraph.api.recordings import hand_schema, recorded

SECRET = "repository-mutations-" + "m" * 32
Given = Callable[[dict[str, Any]], dict[str, Any]]
"""A step's variables, from what the steps before it kept."""

STEPS: list[tuple[str, str, str, Given]] = [
    # (caller, document, what to keep from the answer as `name=path`, variables)
    (
        "admin",
        """mutation($i: CreateUserInput!) { createUser(input: $i) { id name email version
          defaultAddress { label } } }""",
        "user=createUser.id",
        lambda k: {"i": {"email": "Ann@Example.org", "name": "Ann"}},
    ),
    (
        "admin",
        "mutation($i: CreateUserInput!) { createUser(input: $i) { id } }",
        "",
        lambda k: {"i": {"email": "ann@example.ORG", "name": "Twin"}},  # the email, folded
    ),
    (
        "admin",
        "mutation($i: UpdateUserInput!) { updateUser(input: $i) { name email version } }",
        "",
        lambda k: {"i": {"id": k["user"], "expectedVersion": 1, "name": "Ann B"}},
    ),
    (
        "admin",
        "mutation($i: UpdateUserInput!) { updateUser(input: $i) { name } }",
        "",
        lambda k: {"i": {"id": k["user"], "expectedVersion": 1, "name": "stale"}},
    ),
    (
        "admin",
        """mutation($i: AddAddressInput!) { addAddress(input: $i) {
          address { id label line2 isDefault version } user { version
          defaultAddress { label } } } }""",
        "address=addAddress.address.id",
        lambda k: {
            "i": {
                "userId": k["user"],
                "label": "Home",
                "line1": "1 Main St",
                "line2": "Flat 2",
                "city": "Berlin",
                "postalCode": "10115",
                "country": "DE",
            }
        },
    ),
    (
        "admin",
        """mutation($i: UpdateAddressInput!) { updateAddress(input: $i) {
          address { label city line2 isDefault version } user { version } } }""",
        "",
        lambda k: {
            "i": {"id": k["address"], "expectedVersion": 1, "city": "Potsdam", "line2": None}
        },
    ),
    (
        "admin",
        "mutation($i: UpdateAddressInput!) { updateAddress(input: $i) { user { version } } }",
        "",
        lambda k: {"i": {"id": k["address"], "expectedVersion": 2, "label": None}},
    ),
    (
        "admin",
        """mutation($i: CreateOrderInput!) { createOrder(input: $i) { id status currency
          totalCents version items { sku name quantity unitPriceCents } user { name } } }""",
        "order=createOrder.id",
        lambda k: {
            "i": {
                "userId": k["user"],
                "currency": "EUR",
                "items": [
                    {"sku": "A-1", "name": "Tea", "quantity": 3, "unitPriceCents": 450},
                    {"sku": "B-2", "name": "Cup", "quantity": 1, "unitPriceCents": 1200},
                ],
            }
        },
    ),
    (
        "admin",
        """mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }""",
        "",
        lambda k: {
            "i": {
                "userId": k["user"],
                "currency": "EUR",
                "items": [{"sku": "X", "name": "Gold", "quantity": 10000, "unitPriceCents": 10**8}],
            }
        },
    ),
    (
        "admin",
        """mutation($i: UpdateOrderStatusInput!) { updateOrderStatus(input: $i) {
          status version } }""",
        "",
        lambda k: {"i": {"id": k["order"], "status": "SHIPPED", "expectedVersion": 1}},
    ),
    (
        "member",  # may not change orders; the id is checked first
        """mutation($i: UpdateOrderStatusInput!) { updateOrderStatus(input: $i) { status } }""",
        "",
        lambda k: {"i": {"id": k["order"], "status": "CANCELLED", "expectedVersion": 2}},
    ),
    (
        "member",
        """mutation($i: UpdateOrderStatusInput!) { updateOrderStatus(input: $i) { status } }""",
        "",
        lambda k: {"i": {"id": k["user"], "status": "CANCELLED", "expectedVersion": 2}},
    ),
    (
        "admin",
        "mutation($i: CreateGroupInput!) { createGroup(input: $i) { id name version } }",
        "group=createGroup.id",
        lambda k: {"i": {"name": "Readers"}},
    ),
    (
        "admin",
        """mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { name
          members(first: 5) { edges { node { name } } } } }""",
        "",
        lambda k: {"g": k["group"], "u": k["user"]},
    ),
    (
        "admin",  # again: a no-op
        """mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) {
          members(first: 5) { edges { node { name } } } } }""",
        "",
        lambda k: {"g": k["group"], "u": k["user"]},
    ),
    (
        "admin",
        """mutation($g: ID!, $u: ID!) { removeGroupMember(groupId: $g, userId: $u) {
          members(first: 5) { edges { node { name } } } } }""",
        "",
        lambda k: {"g": k["group"], "u": k["user"]},
    ),
    (
        "admin",
        "mutation($i: CreateOrgNodeInput!) { createOrgNode(input: $i) { id name depth version } }",
        "root=createOrgNode.id",
        lambda k: {"i": {"name": "HQ"}},
    ),
    (
        "admin",
        """mutation($i: CreateOrgNodeInput!) { createOrgNode(input: $i) { id name depth
          parent { name } } }""",
        "child=createOrgNode.id",
        lambda k: {"i": {"name": "Sales", "parentId": k["root"]}},
    ),
    (
        "admin",
        "mutation($i: CreateOrgNodeInput!) { createOrgNode(input: $i) { id } }",
        "",
        lambda k: {"i": {"name": "Lost", "parentId": k["user"]}},
    ),
    (
        "admin",
        """mutation($i: MoveOrgNodeInput!) { moveOrgNode(input: $i) { complete node { id name
          depth parent { name } } } }""",
        "moved=moveOrgNode.node.id",
        lambda k: {"i": {"id": k["child"], "expectedVersion": 1}},
    ),
    (
        "admin",
        """mutation($i: DeleteOrgNodeInput!) { deleteOrgNode(input: $i) { complete } }""",
        "",
        lambda k: {"i": {"id": k["root"], "expectedVersion": 1}},
    ),
    (
        "admin",
        """mutation($i: DeleteOrgNodeInput!) { deleteOrgNode(input: $i) { complete } }""",
        "",
        lambda k: {"i": {"id": k["moved"], "expectedVersion": 1, "cascade": True}},
    ),
    (
        "admin",
        "mutation($i: CreateShopInput!) { createShop(input: $i) { id name lat lng version } }",
        "shop=createShop.id",
        lambda k: {"i": {"name": "Corner", "lat": 52.52, "lng": 13.405}},
    ),
    (
        "admin",
        "mutation($i: MoveShopInput!) { moveShop(input: $i) { lat lng version } }",
        "",
        lambda k: {"i": {"id": k["shop"], "expectedVersion": 1, "lat": 48.137, "lng": 11.575}},
    ),
    (
        "admin",
        "mutation($i: MoveShopInput!) { moveShop(input: $i) { lat } }",
        "",
        lambda k: {"i": {"id": k["shop"], "expectedVersion": 2, "lat": 91.0, "lng": 0.0}},
    ),
    (
        "admin",
        "mutation($i: DeleteInput!) { deleteShop(input: $i) { complete } }",
        "",
        lambda k: {"i": {"id": k["shop"], "expectedVersion": 2}},
    ),
    (
        "admin",
        "mutation($i: DeleteInput!) { deleteOrder(input: $i) { complete } }",
        "",
        lambda k: {"i": {"id": k["order"], "expectedVersion": 2}},
    ),
    (
        "admin",
        "mutation($i: DeleteInput!) { deleteGroup(input: $i) { complete } }",
        "",
        lambda k: {"i": {"id": k["group"], "expectedVersion": 1}},
    ),
    (
        "admin",
        """mutation($i: RemoveAddressInput!) { removeAddress(input: $i) { user { version
          defaultAddress { label } } } }""",
        "",
        lambda k: {"i": {"id": k["address"], "expectedVersion": 2}},
    ),
    (
        "member",  # another user's
        "mutation($i: DeleteInput!) { deleteUser(input: $i) { complete } }",
        "",
        lambda k: {"i": {"id": k["user"], "expectedVersion": 2}},
    ),
    (
        "admin",
        "mutation($i: DeleteInput!) { deleteUser(input: $i) { complete } }",
        "",
        lambda k: {"i": {"id": "not an id", "expectedVersion": 2}},
    ),
    (
        "admin",
        "mutation($i: DeleteInput!) { deleteUser(input: $i) { complete } }",
        "",
        lambda k: {"i": {"id": k["user"], "expectedVersion": 4}},
    ),
    (
        "admin",
        "mutation($i: DeleteInput!) { deleteUser(input: $i) { complete } }",
        "",
        lambda k: {"i": {"id": k["user"], "expectedVersion": 4}},
    ),
]
"""One life of each object: every mutation schema.graphql declares, and its refusals."""
SHOWN_AS_GIVEN = {"id", "deletedId", "createdAt", "updatedAt"}
"""Values each server makes its own (new ids, the time of a write): compared by shape."""


def _shape(value: Any) -> Any:
    """The answer with the values each server makes its own replaced by their kind."""
    if isinstance(value, dict):
        return {
            key: type(item).__name__ if key in SHOWN_AS_GIVEN else _shape(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return value


def _refused(answer: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return [
        (
            ".".join(map(str, error.get("path", ()))),
            error["extensions"]["code"],
            error["extensions"].get("currentVersion"),
        )
        for error in answer.get("errors", ())
    ]


def _kept(answer: dict[str, Any], keep: str) -> tuple[str, Any] | None:
    if not keep:
        return None
    name, _, path = keep.partition("=")
    value: Any = answer["data"]
    for step in path.split("."):
        value = value[step]
    return name, value


async def _run(app: Any, tokens: dict[str, str]) -> list[dict[str, Any]]:
    """Each step's answer from one server, its ids kept for the steps after it."""
    kept: dict[str, Any] = {}
    answers = []
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for caller, document, keep, given in STEPS:
            sent = {"query": document, "variables": given(kept)}
            headers = {"authorization": f"Bearer {tokens[caller]}"}
            response = await client.post("/graphql", json=sent, headers=headers)
            assert response.status_code == 200, response.text
            answer: dict[str, Any] = response.json()
            found = _kept(answer, keep)
            if found is not None:
                kept[found[0]] = found[1]
            answers.append(answer)
    return answers


def _serving(store: Store) -> Any:
    """The spec's app on `store`, with the extension, its tokens signed with SECRET."""
    extension = extension_at("server.extension", "generated")
    return serve_app(replace(served("generated", store, SECRET, [extension]), max_cost=10**6))


async def test_every_mutation_answers_as_the_hand_written_server_did(
    kind: str, store_factory: StoreFactory
) -> None:
    app = _serving(await store_factory(kind, TABLE))
    roles = {"admin": ["admin"], "member": ["member"]}
    answers = await _run(
        app, {who: issue(SECRET, "t1", "someone", roles=r) for who, r in roles.items()}
    )
    found = [{"data": _shape(a.get("data")), "refused": _refused(a)} for a in answers]
    ours, theirs = recorded("mutations", found)
    for step, (mine, hers) in enumerate(zip(ours, theirs, strict=True)):
        where = f"step {step}: {STEPS[step][1].split('(')[0]}"
        assert mine["data"] == hers["data"], where
        assert mine["refused"] == hers["refused"], (where, answers[step])
    codes = {code for answer in answers for _, code, _ in _refused(answer)}
    assert codes == {"CONFLICT", "BAD_USER_INPUT", "FORBIDDEN", "NOT_FOUND"}
    versions = {version for answer in answers for _, _, version in _refused(answer)}
    assert {2, 3} <= versions  # a stale update's and a stale delete's current versions


def test_schema_graphql_mutations_are_declared_alike() -> None:
    theirs = hand_schema().mutation_type
    ours = executable(API, [extension_at("server.extension", "generated")], authz).mutation_type
    assert theirs is not None
    assert ours is not None

    def declared(field: Any) -> str:
        args = ", ".join(f"{name}: {arg.type}" for name, arg in field.args.items())
        return f"({args}) {field.type}"

    shown = {name: declared(field) for name, field in theirs.fields.items()}
    assert len(shown) == 19
    assert {name: declared(field) for name, field in ours.fields.items()} == shown
    covered = {re.search(r"\{\s*(\w+)\(", document).group(1) for _, document, _, _ in STEPS}  # type: ignore[union-attr]
    assert covered == set(shown)


ORDERED = """mutation($i: CreateOrderInput!) {
  a: createOrder(input: $i) { user { orders(first: 10) { edges { node { id } } } } }
  b: createOrder(input: $i) { user { orders(first: 10) { edges { node { id } } } } } }"""


async def test_a_field_after_an_extensions_mutation_reads_what_it_wrote(
    kind: str, store_factory: StoreFactory
) -> None:
    app = _serving(await store_factory(kind, TABLE))
    headers = {"authorization": f"Bearer {issue(SECRET, 't1', 'someone', roles=['admin'])}"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:

        async def data(query: str, variables: dict[str, Any]) -> Any:
            sent = {"query": query, "variables": variables}
            answer = (await c.post("/graphql", json=sent, headers=headers)).json()
            assert "errors" not in answer, answer
            return answer["data"]

        made = await data(STEPS[0][1], STEPS[0][3]({}))
        item = {"sku": "S-1", "name": "Pen", "quantity": 1, "unitPriceCents": 100}
        order = {"userId": made["createUser"]["id"], "currency": "EUR", "items": [item]}
        both = await data(ORDERED, {"i": order})
    seen = [[e["node"]["id"] for e in both[k]["user"]["orders"]["edges"]] for k in "ab"]
    # the second order's user reads its orders again: the first's page is not shown
    assert [len(ids) for ids in seen] == [1, 2]
    assert set(seen[0]) < set(seen[1])

"""schema.graphql's subscriptions served from the spec's API (`keygraph serve --package
generated --extend server.extension`): for writes made through its mutations, each sends
what the hand-written server sent for the same writes (recorded in recorded/subscriptions_*.json,
tests/keygraph/api/recordings.py): the kind and shape of each change, FORBIDDEN, NOT_FOUND
or BAD_USER_INPUT at subscribe (ids no subscription can follow too), nothing of another
tenant; a resume after a cursor sends the changes after it again; and each is declared as
the hand-written server declared it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from graphql import GraphQLObjectType, GraphQLSchema, get_named_type
from httpx_ws import AsyncWebSocketSession
from starlette.types import ASGIApp

from generated import authz
from generated.api import API
from generated.table import TABLE
from keygraph.api import executable
from keygraph.api.ids import global_id
from keygraph.serve import create_app as serve_app
from keygraph.serve.package import extension_at, served
from keygraph.store import Store
from keygraph.tokens import issue
from tests.conftest import StoreFactory
from tests.ids import local_id, to_global_id
from tests.keygraph.api.recordings import hand_schema, numbered, recorded
from tests.keygraph.api.ws_sockets import Open, sockets
from tests.server.conftest import Api
from tests.waiting import until

SECRET = "repository-subscriptions-" + "s" * 32
EXTENSIONS = ("server.extension",)
MADE = frozenset({"id", "groupId", "userId"})
"""The fields holding ids the writes made, new each run: numbered as recorded."""
ORDERS = """subscription($u: ID!, $after: String) {
  orderChanged(userId: $u, after: $after) {
    change cursor order { id status totalCents items { sku quantity } user { name } }
  }
}"""
USER = """subscription($id: ID!) {
  userChanged(id: $id) { change cursor user { id name email } }
}"""
MEMBERS = """subscription($g: ID!) {
  groupMembersChanged(groupId: $g) { change cursor groupId userId user { name } }
}"""
ORG = """subscription($id: ID!, $after: String) {
  orgNodeChanged(id: $id, after: $after) { change cursor node { id name depth version } }
}"""


def extensions() -> list[Any]:
    return [extension_at(place, "generated") for place in EXTENSIONS]


@dataclass
class Running:
    """The spec's app, started, the feeds its subscriptions are delivered by, and clients
    of its mutations as each tenant's admin."""

    app: ASGIApp
    feeds: Callable[[], int]
    acme: Api
    globex: Api

    @contextlib.asynccontextmanager
    async def connections(self) -> AsyncIterator[Open]:
        """Opens sockets on the app (all closed at the end of the block)."""
        async with sockets(self.app, SECRET) as open_socket:
            yield open_socket

    @contextlib.asynccontextmanager
    async def socket(
        self, tenant: str = "acme", subject: str = "alice", role: str = "admin"
    ) -> AsyncIterator[AsyncWebSocketSession]:
        """A socket on the app as one caller."""
        async with self.connections() as open_socket:
            yield await open_socket(tenant, role, subject=subject)

    async def subscribe(
        self, ws: AsyncWebSocketSession, query: str, variables: dict[str, Any], ident: str = "1"
    ) -> None:
        """Subscribes on the socket, once the subscription's feed is open."""
        before = self.feeds()
        await subscribe(ws, ident, query, variables)
        await until(lambda: self.feeds() > before, "the subscription's feed")


@contextlib.asynccontextmanager
async def _serving(store: Store) -> AsyncIterator[tuple[ASGIApp, Callable[[], int]]]:
    """The spec's app on `store`, started, and the count of the feeds its hub delivers to."""
    spec_served = served("generated", store, SECRET, extensions())
    assert spec_served.realtime is not None
    hub = spec_served.realtime.hub
    app = serve_app(spec_served)
    async with app.router.lifespan_context(app):
        yield app, lambda: hub.open_feeds


@pytest.fixture
async def running(store_factory: StoreFactory) -> AsyncIterator[Running]:
    """On the embedded store, whose change log holds each write once it is answered (a
    subscription opened after it never sees it, as one may on DynamoDB Local's stream)."""
    store = await store_factory("embedded", TABLE)
    async with (
        _serving(store) as (app, feeds),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client,
    ):
        acme = Api(client, issue(SECRET, "acme", "alice", roles=["admin"]))
        globex = Api(client, issue(SECRET, "globex", "gus", roles=["admin"]))
        yield Running(app, feeds, acme, globex)


async def subscribe(
    ws: AsyncWebSocketSession, ident: str, query: str, variables: dict[str, Any]
) -> None:
    payload = {"query": query, "variables": variables}
    await ws.send_json({"type": "subscribe", "id": ident, "payload": payload})


async def receive(ws: AsyncWebSocketSession, wait: float = 20) -> dict[str, Any]:
    message: dict[str, Any] = await ws.receive_json(timeout=wait)
    return message


def shown(message: dict[str, Any]) -> dict[str, Any]:
    """A `next` message's data without its cursors (signed with the app's key), and each
    error's path and code."""
    assert message["type"] == "next", message
    payload = message["payload"]
    errors = [(e.get("path"), e["extensions"]["code"]) for e in payload.get("errors", ())]
    return {"data": _uncursored(payload["data"]), "errors": errors}


def _uncursored(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _uncursored(v) for k, v in value.items() if k != "cursor"}
    return value


def as_recorded(name: str, messages: list[dict[str, Any]]) -> None:
    """The messages are shown as the hand-written server's were, recorded under `name`:
    the ids the writes made numbered in order of appearance."""
    ours, theirs = recorded(f"subscriptions_{name}", numbered([shown(m) for m in messages], MADE))
    assert ours == theirs


def cursor(message: dict[str, Any]) -> str:
    (change,) = message["payload"]["data"].values()
    found: str = change["cursor"]
    return found


async def events(ws: AsyncWebSocketSession, count: int, ident: str = "1") -> list[dict[str, Any]]:
    """The socket's next `count` messages, each of the subscription `ident`."""
    found = [await receive(ws) for _ in range(count)]
    assert all(m.get("id") == ident for m in found), found
    return found


async def until_seen(
    ws: AsyncWebSocketSession, last: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """The socket's messages up to the first `last` holds for."""
    found = [await receive(ws)]
    while not last(found[-1]):
        found.append(await receive(ws))
    return found


async def nothing_more(*sockets: AsyncWebSocketSession) -> None:
    """No message but the answer to a ping arrives on each socket."""
    for ws in sockets:
        await ws.send_json({"type": "ping"})
        assert await receive(ws, 5) == {"type": "pong"}


async def code_at_subscribe(ws: AsyncWebSocketSession) -> str:
    message = await receive(ws, 5)
    assert message["type"] == "error", message
    code: str = message["payload"][0]["extensions"]["code"]
    return code


async def update_status(api: Api, order: dict[str, Any], status: str) -> dict[str, Any]:
    data = await api.data(
        "mutation($i: UpdateOrderStatusInput!) { updateOrderStatus(input: $i) { id version } }",
        {"i": {"id": order["id"], "status": status, "expectedVersion": order["version"]}},
    )
    updated: dict[str, Any] = data["updateOrderStatus"]
    return updated


async def test_order_changes_are_sent_as_recorded_and_resume_after_a_cursor(
    running: Running,
) -> None:
    bob = await running.acme.create_user("bob@acme.test", "Bob")
    variables = {"u": bob["id"]}
    async with running.socket() as ws:
        await running.subscribe(ws, ORDERS, variables)
        order = await running.acme.create_order(bob["id"], [("A-1", 2, 150)])
        paid = await update_status(running.acme, order, "PAID")
        await running.acme.data(
            "mutation($i: DeleteInput!) { deleteOrder(input: $i) { deletedId } }",
            {"i": {"id": order["id"], "expectedVersion": paid["version"]}},
        )
        ours = await events(ws, 3)
        as_recorded("orders", ours)
        changes = [m["payload"]["data"]["orderChanged"] for m in ours]
        assert [(c["change"], c["order"]["status"]) for c in changes] == [
            ("CREATED", "PENDING"),
            ("UPDATED", "PAID"),
            ("DELETED", "PAID"),
        ]
        assert {c["order"]["id"] for c in changes} == {order["id"]}
        assert changes[0]["order"]["user"] == {"name": "Bob"}
        assert changes[0]["order"]["items"] == [{"sku": "A-1", "quantity": 2}]
        after = {**variables, "after": cursor(ours[0])}
        await running.subscribe(ws, ORDERS, after, ident="2")
        resumed = await events(ws, 2, ident="2")
        assert [shown(m) for m in resumed] == [shown(m) for m in ours[1:]]
        await nothing_more(ws)


async def test_a_member_follows_its_own_orders_alone(running: Running) -> None:
    bob = await running.acme.create_user("bob@acme.test", "Bob")
    carol = await running.acme.create_user("carol@acme.test", "Carol")
    group = await running.acme.create_group("Staff")
    refused = [
        ({"u": carol["id"]}, "FORBIDDEN"),
        ({"u": group["id"]}, "NOT_FOUND"),  # another type's id
        ({"u": "not an id"}, "BAD_USER_INPUT"),
    ]
    async with running.socket(subject=local_id(bob["id"], "User"), role="member") as ws:
        for ident, (variables, code) in enumerate(refused):
            await subscribe(ws, str(ident), ORDERS, variables)
            assert await code_at_subscribe(ws) == code, variables
        await running.subscribe(ws, ORDERS, {"u": bob["id"]}, ident="own")
        await running.acme.create_order(carol["id"], [("C", 1, 100)])
        await running.acme.create_order(bob["id"], [("B", 1, 100)])
        ours = await events(ws, 1, ident="own")
        as_recorded("own_orders", ours)
        assert ours[0]["payload"]["data"]["orderChanged"]["order"]["items"] == [
            {"sku": "B", "quantity": 1}
        ]
        await nothing_more(ws)


async def test_another_tenants_writes_are_not_sent(running: Running) -> None:
    bob = await running.acme.create_user("bob@acme.test", "Bob")
    variables = {"u": bob["id"]}
    async with running.connections() as open_socket:
        stranger = await open_socket("globex", "admin", subject="gus")
        owner = await open_socket("acme", "admin", subject="alice")
        await running.subscribe(stranger, ORDERS, variables)  # acme's id, in globex
        await running.subscribe(owner, ORDERS, variables)
        await running.acme.create_order(bob["id"], [("A", 1, 100)])
        as_recorded("owners_orders", await events(owner, 1))  # the change was read
        await nothing_more(stranger)


async def test_user_changes_are_sent_as_recorded_with_what_the_caller_may_not_read(
    running: Running,
) -> None:
    bob = await running.acme.create_user("bob@acme.test", "Bob")
    carol = await running.acme.create_user("carol@acme.test", "Carol")
    async with running.socket(subject=local_id(carol["id"], "User"), role="member") as ws:
        await running.subscribe(ws, USER, {"id": bob["id"]})
        await running.acme.data(
            "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id } }",
            {"i": {"id": bob["id"], "expectedVersion": bob["version"], "name": "Robert"}},
        )
        ours = await events(ws, 1)
        as_recorded("user", ours)
        assert shown(ours[0]) == {
            "data": {
                "userChanged": {
                    "change": "UPDATED",
                    "user": {"id": bob["id"], "name": "Robert", "email": None},
                }
            },
            "errors": [(["userChanged", "user", "email"], "FORBIDDEN")],
        }


async def test_group_member_changes_are_sent_as_recorded(running: Running) -> None:
    acme = running.acme
    group = await acme.create_group("Staff")
    bob = await acme.create_user("bob@acme.test", "Bob")
    carol = await acme.create_user("carol@acme.test", "Carol")
    async with running.socket() as ws:
        await running.subscribe(ws, MEMBERS, {"g": group["id"]})
        for user in (bob, carol):
            await acme.add_member(group["id"], user["id"])
        await acme.data(
            "mutation($g: ID!, $u: ID!) { removeGroupMember(groupId: $g, userId: $u) { id } }",
            {"g": group["id"], "u": bob["id"]},
        )
        ours = await events(ws, 3)  # each resolved while carol is there
        await acme.data(  # its memberships go after it: the last change's user is null
            "mutation($i: DeleteInput!) { deleteUser(input: $i) { deletedId } }",
            {"i": {"id": carol["id"], "expectedVersion": carol["version"] + 1}},
        )
        ours += await events(ws, 1)
        as_recorded("group_members", ours)
        changes = [m["payload"]["data"]["groupMembersChanged"] for m in ours]
        assert [(c["change"], c["userId"], c["user"]) for c in changes] == [
            ("CREATED", bob["id"], {"name": "Bob"}),
            ("CREATED", carol["id"], {"name": "Carol"}),
            ("DELETED", bob["id"], {"name": "Bob"}),
            ("DELETED", carol["id"], None),
        ]
        assert {c["groupId"] for c in changes} == {group["id"]}


async def create_node(api: Api, name: str, parent: str | None = None) -> dict[str, Any]:
    data = await api.data(
        "mutation($i: CreateOrgNodeInput!) { createOrgNode(input: $i) { id name version } }",
        {"i": {"name": name, "parentId": parent}},
    )
    node: dict[str, Any] = data["createOrgNode"]
    return node


def created(name: str) -> Callable[[dict[str, Any]], bool]:
    def holds(message: dict[str, Any]) -> bool:
        change = message["payload"]["data"]["orgNodeChanged"]
        return bool(change["change"] == "CREATED" and change["node"]["name"] == name)

    return holds


async def test_org_node_changes_cover_the_node_and_its_subtree_as_recorded(
    running: Running,
) -> None:
    acme = running.acme
    root = await create_node(acme, "Root")
    other = await create_node(acme, "Other")
    variables = {"id": root["id"]}
    async with running.socket() as ws:
        await running.subscribe(ws, ORG, variables)
        team = await create_node(acme, "Team", root["id"])
        await create_node(acme, "Elsewhere", other["id"])
        await create_node(acme, "Crew", team["id"])
        await acme.data(
            "mutation($i: MoveOrgNodeInput!) { moveOrgNode(input: $i) { node { id } } }",
            {
                "i": {
                    "id": team["id"],
                    "expectedVersion": team["version"] + 1,
                    "newParentId": other["id"],
                }
            },
        )
        await create_node(acme, "Last", root["id"])  # after the move's first transaction
        ours = await until_seen(ws, created("Last"))
        as_recorded("org_nodes", ours)
        seen = {
            (c["change"], c["node"]["name"])
            for c in (m["payload"]["data"]["orgNodeChanged"] for m in ours)
        }
        assert {("CREATED", "Team"), ("UPDATED", "Root"), ("CREATED", "Crew")} <= seen
        assert {("DELETED", "Team"), ("DELETED", "Crew")} <= seen
        assert not any(name in ("Elsewhere", "Other") for _change, name in seen)
        await running.subscribe(ws, ORG, {**variables, "after": cursor(ours[0])}, ident="2")
        again = await until_seen(ws, created("Last"))
        assert [shown(m) for m in again] == [shown(m) for m in ours[1:]]


def hostile() -> list[tuple[str, dict[str, Any]]]:
    """Ids no subscription can follow: no id at all, another type's, an org node's path
    with an empty part or more levels than a tree has."""
    org = "orgNodeChanged(id: $id) { change }"
    return [
        ("userChanged(id: $id) { change }", {"id": "not an id"}),
        ("userChanged(id: $id) { change }", {"id": to_global_id("Group", "g1")}),
        ("groupMembersChanged(groupId: $id) { change }", {"id": to_global_id("User", "u1")}),
        (org, {"id": to_global_id("User", "u1")}),
        (org, {"id": to_global_id("OrgNode", "a..b")}),
        (org, {"id": to_global_id("OrgNode", ".".join(["a"] * 40))}),
    ]


async def test_ids_no_subscription_can_follow_are_refused_as_recorded(running: Running) -> None:
    async with running.socket() as ws:
        codes = []
        for ident, (field, given) in enumerate(hostile()):
            await subscribe(ws, str(ident), f"subscription($id: ID!) {{ {field} }}", given)
            codes.append(await code_at_subscribe(ws))
        ours, theirs = recorded("subscriptions_refused_ids", codes)
        assert ours == theirs
        assert set(codes) <= {"NOT_FOUND", "BAD_USER_INPUT"}
        listed = {"id": global_id("OrgNode", [["a", "b"]])}  # a path that joins, as a list
        await subscribe(ws, "listed", ORG, listed)
        assert await code_at_subscribe(ws) == "NOT_FOUND"
        long_path = {"id": to_global_id("OrgNode", "x" * 3000)}  # no key holds it
        await subscribe(ws, "long", ORG, long_path)
        assert await code_at_subscribe(ws) == "BAD_USER_INPUT"
        await running.subscribe(ws, USER, {"id": to_global_id("User", "u1")})
        await nothing_more(ws)  # the socket still serves


def _changes(schema: GraphQLSchema) -> dict[tuple[str, str], str]:
    """Each Subscription field and each field of what it answers: arguments and type."""
    found: dict[tuple[str, str], str] = {}
    subscription = schema.subscription_type
    assert subscription is not None
    for name, field in subscription.fields.items():
        args = ", ".join(f"{a}: {v.type}" for a, v in field.args.items())
        found[("Subscription", name)] = f"({args}) {field.type}"
        change = get_named_type(field.type)
        assert isinstance(change, GraphQLObjectType)
        for field_name, shown_field in change.fields.items():
            found[(change.name, field_name)] = str(shown_field.type)
    return found


def test_schema_graphql_subscriptions_are_declared_alike() -> None:
    theirs = _changes(hand_schema())
    ours = _changes(executable(API, extensions(), authz))
    assert len(theirs) == 18
    assert {where: ours.get(where) for where in theirs} == theirs

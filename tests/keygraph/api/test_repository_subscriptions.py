"""schema.graphql's subscriptions served from the spec's API (`keygraph serve --package
generated --extend server.extension`): over one store, with the hand-written server beside
it on the same change stream, each sends what the hand-written server sends for the same
writes (made through its mutations): the kind and shape of each change, a resume after a
cursor, FORBIDDEN, NOT_FOUND or BAD_USER_INPUT at subscribe (ids no subscription can follow
too), nothing of another tenant; and each is declared alike."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import GraphQLObjectType, GraphQLSchema, build_schema, get_named_type
from httpx_ws import AsyncWebSocketSession
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from generated import authz
from generated.api import API
from generated.table import TABLE
from keygraph.api import executable
from keygraph.api.ids import global_id
from keygraph.realtime.hub import Hub
from keygraph.serve import create_app as serve_app
from keygraph.serve.package import extension_at, served
from keygraph.tokens import issue
from server.api import sdl
from server.auth.tokens import issue_token
from server.edge.app import App, create_app
from server.graphql.ids import local_id, to_global_id
from server.realtime.connection import Realtime
from server.settings import Settings
from tests.conftest import StoreFactory
from tests.server.conftest import Api
from tests.server.realtime.conftest import receive, sessions, subscribe
from tests.waiting import until

SECRET = "repository-subscriptions-" + "s" * 32
Pair = tuple[AsyncWebSocketSession, AsyncWebSocketSession]
"""A socket on the hand-written server's app and one on the spec's."""
EXTENSIONS = ("server.extension",)
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
class Both:
    """The hand-written server and the spec's app on one store, and the hand-written
    server's clients as each tenant's admin (the writes go through its mutations)."""

    hand: App
    spec: Starlette
    hub: Hub
    settings: Settings
    acme: Api
    globex: Api

    def feeds(self) -> int:
        """The feeds both apps' stream readers deliver to."""
        apps = [getattr(route, "app", None) for route in self.hand.routes]
        (realtime,) = [endpoint for endpoint in apps if isinstance(endpoint, Realtime)]
        return int(realtime.hub.open_feeds) + self.hub.open_feeds

    @contextlib.asynccontextmanager
    async def connections(self) -> AsyncIterator[Callable[..., Awaitable[Pair]]]:
        """Opens a socket on each app as one caller, `await open(tenant, subject, role)`:
        the hand-written server's, then the spec's (on one transport, all closed at the
        end of the block)."""
        async with sessions(_routed(self.hand, self.spec))() as open_session:

            async def open_pair(
                tenant: str = "acme", subject: str | None = "alice", role: str = "admin"
            ) -> Pair:
                hand_token = issue_token(self.settings, tenant, subject, roles=[role])
                spec_token = issue(SECRET, tenant, subject, roles=[role])
                hand = await open_session(hand_token, path=HAND + "/graphql")
                return hand, await open_session(spec_token)

            yield open_pair

    @contextlib.asynccontextmanager
    async def sockets(
        self, tenant: str = "acme", subject: str | None = "alice", role: str = "admin"
    ) -> AsyncIterator[Pair]:
        """A socket on each app as the same caller: the hand-written server's, the spec's."""
        async with self.connections() as open_pair:
            yield await open_pair(tenant, subject, role)

    async def subscribe(
        self,
        sockets: Pair,
        query: str,
        variables: tuple[dict[str, Any], dict[str, Any]],
        ident: str = "1",
    ) -> None:
        """Subscribes on both sockets (each with its variables), once both feeds are open."""
        before = self.feeds()
        for ws, given in zip(sockets, variables, strict=True):
            await subscribe(ws, ident, query, given)
        await until(lambda: self.feeds() >= before + 2, "both subscriptions' feeds")


HAND = "/hand"
"""Where the hand-written server is reached on the sockets' one transport."""


def _routed(hand: ASGIApp, spec: ASGIApp) -> ASGIApp:
    """One app of the two (a test's sockets share one transport): the hand-written server
    under HAND, the spec's elsewhere."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if not path.startswith(HAND + "/"):
            await spec(scope, receive, send)
            return
        inner = path.removeprefix(HAND)
        await hand({**scope, "path": inner, "raw_path": inner.encode()}, receive, send)

    return app


@pytest.fixture
async def both(store_factory: StoreFactory, tmp_path: Path) -> AsyncIterator[Both]:
    """On the embedded store, whose change log holds each write once it is answered (a
    subscription opened after it never sees it, as one may on DynamoDB Local's stream)."""
    store = await store_factory("embedded", TABLE)
    settings = Settings(data_dir=tmp_path, jwt_secret=SECRET, stream_poll_interval=0.01)
    settings = settings.resolved()
    hand = create_app(settings, store)
    spec_served = served("generated", store, SECRET, extensions())
    assert spec_served.realtime is not None
    spec = serve_app(spec_served)
    transport = httpx.ASGITransport(app=hand)
    async with (
        hand.router.lifespan_context(hand),
        spec.router.lifespan_context(spec),
        httpx.AsyncClient(transport=transport, base_url="http://hand.test") as client,
    ):
        acme = Api(client, issue_token(settings, "acme", "alice", roles=["admin"]))
        globex = Api(client, issue_token(settings, "globex", "gus", roles=["admin"]))
        yield Both(hand, spec, spec_served.realtime.hub, settings, acme, globex)


def shown(message: dict[str, Any]) -> dict[str, Any]:
    """A `next` message's data without its cursors (each app signs its own), and each
    error's path and code."""
    assert message["type"] == "next", message
    payload = message["payload"]
    errors = [(e.get("path"), e["extensions"]["code"]) for e in payload.get("errors", ())]
    return {"data": _uncursored(payload["data"]), "errors": errors}


def _uncursored(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _uncursored(v) for k, v in value.items() if k != "cursor"}
    return value


def cursor(message: dict[str, Any]) -> str:
    (change,) = message["payload"]["data"].values()
    found: str = change["cursor"]
    return found


async def events(
    sockets: Pair, count: int, ident: str = "1"
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The next `count` messages of each socket, the hand-written server's then ours."""
    hand, spec = sockets
    theirs = [await receive(hand, 20) for _ in range(count)]
    ours = [await receive(spec, 20) for _ in range(count)]
    assert all(m.get("id") == ident for m in theirs + ours), (theirs, ours)
    return theirs, ours


async def until_seen(
    ws: AsyncWebSocketSession, last: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """The socket's messages up to the first `last` holds for."""
    found = [await receive(ws, 20)]
    while not last(found[-1]):
        found.append(await receive(ws, 20))
    return found


async def nothing_more(*sockets: AsyncWebSocketSession) -> None:
    """No message but the answer to a ping arrives on each socket."""
    for ws in sockets:
        await ws.send_json({"type": "ping"})
        assert await receive(ws) == {"type": "pong"}


async def code_at_subscribe(ws: AsyncWebSocketSession) -> str:
    message = await receive(ws)
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


async def test_order_changes_answer_alike_and_resume_after_a_cursor(both: Both) -> None:
    bob = await both.acme.create_user("bob@acme.test", "Bob")
    variables = {"u": bob["id"]}
    async with both.sockets() as sockets:
        await both.subscribe(sockets, ORDERS, (variables, variables))
        order = await both.acme.create_order(bob["id"], [("A-1", 2, 150)])
        paid = await update_status(both.acme, order, "PAID")
        await both.acme.data(
            "mutation($i: DeleteInput!) { deleteOrder(input: $i) { deletedId } }",
            {"i": {"id": order["id"], "expectedVersion": paid["version"]}},
        )
        theirs, ours = await events(sockets, 3)
        assert [shown(m) for m in ours] == [shown(m) for m in theirs]
        changes = [m["payload"]["data"]["orderChanged"] for m in ours]
        assert [(c["change"], c["order"]["status"]) for c in changes] == [
            ("CREATED", "PENDING"),
            ("UPDATED", "PAID"),
            ("DELETED", "PAID"),
        ]
        assert changes[0]["order"]["user"] == {"name": "Bob"}
        assert changes[0]["order"]["items"] == [{"sku": "A-1", "quantity": 2}]
        after = ({**variables, "after": cursor(theirs[0])}, {**variables, "after": cursor(ours[0])})
        await both.subscribe(sockets, ORDERS, after, ident="2")
        resumed_theirs, resumed_ours = await events(sockets, 2, ident="2")
        assert [shown(m) for m in resumed_ours] == [shown(m) for m in ours[1:]]
        assert [shown(m) for m in resumed_theirs] == [shown(m) for m in theirs[1:]]
        await nothing_more(*sockets)


async def test_a_member_follows_its_own_orders_alone(both: Both) -> None:
    bob = await both.acme.create_user("bob@acme.test", "Bob")
    carol = await both.acme.create_user("carol@acme.test", "Carol")
    group = await both.acme.create_group("Staff")
    refused = [
        ({"u": carol["id"]}, "FORBIDDEN"),
        ({"u": group["id"]}, "NOT_FOUND"),  # another type's id
        ({"u": "not an id"}, "BAD_USER_INPUT"),
    ]
    async with both.sockets(subject=local_id(bob["id"], "User"), role="member") as sockets:
        for ident, (variables, code) in enumerate(refused):
            for ws in sockets:
                await subscribe(ws, str(ident), ORDERS, variables)
                assert await code_at_subscribe(ws) == code, variables
        await both.subscribe(sockets, ORDERS, ({"u": bob["id"]},) * 2, ident="own")
        await both.acme.create_order(carol["id"], [("C", 1, 100)])
        await both.acme.create_order(bob["id"], [("B", 1, 100)])
        theirs, ours = await events(sockets, 1, ident="own")
        assert [shown(m) for m in ours] == [shown(m) for m in theirs]
        assert ours[0]["payload"]["data"]["orderChanged"]["order"]["items"] == [
            {"sku": "B", "quantity": 1}
        ]
        await nothing_more(*sockets)


async def test_another_tenants_writes_are_not_sent(both: Both) -> None:
    bob = await both.acme.create_user("bob@acme.test", "Bob")
    variables = ({"u": bob["id"]},) * 2
    async with both.connections() as open_pair:
        strangers, owners = await open_pair("globex", "gus"), await open_pair()
        await both.subscribe(strangers, ORDERS, variables)  # acme's id, in globex
        await both.subscribe(owners, ORDERS, variables)
        await both.acme.create_order(bob["id"], [("A", 1, 100)])
        theirs, ours = await events(owners, 1)  # the change was read by both apps
        assert [shown(m) for m in ours] == [shown(m) for m in theirs]
        await nothing_more(*strangers)


async def test_user_changes_answer_alike_with_what_the_caller_may_not_read(both: Both) -> None:
    bob = await both.acme.create_user("bob@acme.test", "Bob")
    carol = await both.acme.create_user("carol@acme.test", "Carol")
    async with both.sockets(subject=local_id(carol["id"], "User"), role="member") as sockets:
        await both.subscribe(sockets, USER, ({"id": bob["id"]},) * 2)
        await both.acme.data(
            "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id } }",
            {"i": {"id": bob["id"], "expectedVersion": bob["version"], "name": "Robert"}},
        )
        theirs, ours = await events(sockets, 1)
        assert [shown(m) for m in ours] == [shown(m) for m in theirs]
        assert shown(ours[0]) == {
            "data": {
                "userChanged": {
                    "change": "UPDATED",
                    "user": {"id": bob["id"], "name": "Robert", "email": None},
                }
            },
            "errors": [(["userChanged", "user", "email"], "FORBIDDEN")],
        }


async def test_group_member_changes_answer_alike(both: Both) -> None:
    acme = both.acme
    group = await acme.create_group("Staff")
    bob = await acme.create_user("bob@acme.test", "Bob")
    carol = await acme.create_user("carol@acme.test", "Carol")
    async with both.sockets() as sockets:
        await both.subscribe(sockets, MEMBERS, ({"g": group["id"]},) * 2)
        for user in (bob, carol):
            await acme.add_member(group["id"], user["id"])
        await acme.data(
            "mutation($g: ID!, $u: ID!) { removeGroupMember(groupId: $g, userId: $u) { id } }",
            {"g": group["id"], "u": bob["id"]},
        )
        theirs, ours = await events(sockets, 3)  # each resolved while carol is there
        await acme.data(  # its memberships go after it: the last change's user is null
            "mutation($i: DeleteInput!) { deleteUser(input: $i) { deletedId } }",
            {"i": {"id": carol["id"], "expectedVersion": carol["version"] + 1}},
        )
        last_theirs, last_ours = await events(sockets, 1)
        theirs, ours = theirs + last_theirs, ours + last_ours
        assert [shown(m) for m in ours] == [shown(m) for m in theirs]
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


async def test_org_node_changes_cover_the_node_and_its_subtree_alike(both: Both) -> None:
    acme = both.acme
    root = await create_node(acme, "Root")
    other = await create_node(acme, "Other")
    variables = ({"id": root["id"]},) * 2  # one id names the node on both
    async with both.sockets() as sockets:
        await both.subscribe(sockets, ORG, variables)
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
        hand, spec = sockets
        theirs = await until_seen(hand, created("Last"))
        ours = await until_seen(spec, created("Last"))
        assert [shown(m) for m in ours] == [shown(m) for m in theirs]
        seen = {
            (c["change"], c["node"]["name"])
            for c in (m["payload"]["data"]["orgNodeChanged"] for m in ours)
        }
        assert {("CREATED", "Team"), ("UPDATED", "Root"), ("CREATED", "Crew")} <= seen
        assert {("DELETED", "Team"), ("DELETED", "Crew")} <= seen
        assert not any(name in ("Elsewhere", "Other") for _change, name in seen)
        resumed = (
            {**variables[0], "after": cursor(theirs[0])},
            {**variables[1], "after": cursor(ours[0])},
        )
        await both.subscribe(sockets, ORG, resumed, ident="2")
        again = await until_seen(spec, created("Last"))
        assert [shown(m) for m in again] == [shown(m) for m in ours[1:]]


def hostile(spelt: Callable[[str, list[Any]], str]) -> list[tuple[str, dict[str, Any]]]:
    """Ids no subscription can follow, spelt by `spelt(type, parts)`: no id at all, another
    type's, an org node's path with an empty part or more levels than a tree has."""
    org = "orgNodeChanged(id: $id) { change }"
    return [
        ("userChanged(id: $id) { change }", {"id": "not an id"}),
        ("userChanged(id: $id) { change }", {"id": spelt("Group", ["g1"])}),
        ("groupMembersChanged(groupId: $id) { change }", {"id": spelt("User", ["u1"])}),
        (org, {"id": spelt("User", ["u1"])}),
        (org, {"id": spelt("OrgNode", [["a", "", "b"]])}),
        (org, {"id": spelt("OrgNode", [["a"] * 40])}),
    ]


def _hand_id(type_name: str, parts: list[Any]) -> str:
    """The hand-written server's spelling of a global id (an org node's path with dots)."""
    (part,) = parts
    return to_global_id(type_name, ".".join(part) if isinstance(part, list) else part)


async def test_ids_no_subscription_can_follow_are_refused_alike(both: Both) -> None:
    async with both.sockets() as (hand, spec):
        for ident, (field, given) in enumerate(hostile(_hand_id)):  # one spelling on both
            query = f"subscription($id: ID!) {{ {field} }}"
            await subscribe(hand, str(ident), query, given)
            await subscribe(spec, str(ident), query, given)
            code = await code_at_subscribe(hand)
            assert code in ("NOT_FOUND", "BAD_USER_INPUT"), (field, given)
            assert await code_at_subscribe(spec) == code, (field, given)
        listed = {"id": global_id("OrgNode", [["a", "b"]])}  # a path that joins, as a list
        await subscribe(spec, "listed", ORG, listed)
        assert await code_at_subscribe(spec) == "NOT_FOUND"
        long_path = {"id": _hand_id("OrgNode", [["x" * 3000]])}  # no key holds it
        await subscribe(spec, "long", ORG, long_path)
        assert await code_at_subscribe(spec) == "BAD_USER_INPUT"
        await both.subscribe((hand, spec), USER, ({"id": _hand_id("User", ["u1"])},) * 2)
        await nothing_more(hand, spec)  # each socket still serves


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
    theirs = _changes(build_schema(sdl()))
    ours = _changes(executable(API, extensions(), authz))
    assert len(theirs) == 18
    assert {where: ours.get(where) for where in theirs} == theirs

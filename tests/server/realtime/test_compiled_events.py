"""Events resolve through the compiled executor: the same subscriptions, on an app running
graphql-core's executor over the same store and stream, get the same bytes; the compiled
plan runs for each event; subscribers who would get the same payload share one resolution,
and subscribers with other rights do not."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
import pytest
from httpx_ws import AsyncWebSocketSession
from starlette.types import ASGIApp, Receive, Scope, Send

from keygraph.execution.run import Run
from keygraph.stores.embedded.store import EmbeddedStore
from server.edge.app import App, create_app
from server.graphql.ids import local_id
from server.realtime import events
from server.settings import Settings
from tests.server.conftest import Api
from tests.server.realtime.capturing_store import CapturingStore
from tests.server.realtime.conftest import Sockets, sessions, settle, subscribe
from tests.server.realtime.memory_stream import MemoryStream
from tests.server.realtime.test_fields import ORDERS, USER, create_node, update_status

MEMBERS = """subscription($g: ID!) {
  groupMembersChanged(groupId: $g) { change cursor groupId userId user { name email } }
}"""
ORG = """subscription($id: ID!) {
  orgNodeChanged(id: $id) {
    __typename change cursor node { id name depth version parent { name } children { name } }
  }
}"""


@pytest.fixture
def app(hand_app: App) -> App:
    """The hand-written server alone: these are about its executors and shared payloads."""
    return hand_app


@pytest.fixture
async def core_app(
    settings: Settings, store: EmbeddedStore, stream: MemoryStream
) -> AsyncIterator[App]:
    """The app on graphql-core's executor, over the same store and change stream."""
    core = dataclasses.replace(settings, executor="strawberry")
    built = create_app(core, CapturingStore(store, stream), stream=stream)
    async with built.router.lifespan_context(built):
        yield built


def both(compiled: App, core: App) -> ASGIApp:
    """The compiled app, and the graphql-core one under /core."""

    async def route(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if path.startswith("/core/"):
            await core({**scope, "path": path.removeprefix("/core")}, receive, send)
        else:
            await compiled(scope, receive, send)

    return route


async def drained(ws: AsyncWebSocketSession) -> list[str]:
    """The messages `ws` was sent, as sent, until several reads in a row bring none."""
    texts: list[str] = []
    quiet = 0
    while quiet < 3:
        await settle()
        await ws.send_json({"type": "ping"})
        before = len(texts)
        while (text := await ws.receive_text(timeout=5.0)) != '{"type":"pong"}':
            texts.append(text)
        quiet = quiet + 1 if len(texts) == before else 0
    return texts


def by_subscription(texts: list[str]) -> dict[str, list[str]]:
    """The messages of each subscription of a connection, in the order sent."""
    found: dict[str, list[str]] = {}
    for text in texts:
        found.setdefault(orjson.loads(text)["id"], []).append(text)
    return found


async def test_events_equal_graphql_cores_byte_for_byte(
    app: App,
    core_app: App,
    acme: Api,
    member_token: Callable[[str], str],
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    carol = await acme.create_user("carol@acme.test", "Carol")
    group = await acme.create_group("Ops")
    root, other = await create_node(acme, "Root"), await create_node(acme, "Other")
    await settle()
    carol_token = member_token(local_id(carol["id"], "User"))
    async with sessions(both(app, core_app))() as open_session:
        pairs = []
        for path in ("/graphql", "/core/graphql"):
            admin = await open_session(acme.token, path=path)
            member = await open_session(carol_token, path=path)
            await subscribe(admin, "o", ORDERS, {"u": bob["id"]})
            await subscribe(admin, "g", MEMBERS, {"g": group["id"]})
            await subscribe(admin, "n", ORG, {"id": root["id"]})
            await subscribe(member, "u", USER, {"id": bob["id"]})
            await subscribe(member, "x", ORDERS, {"u": bob["id"]})  # refused: FORBIDDEN
            pairs.append((admin, member))
        await settle()
        sockets = [socket for pair in pairs for socket in pair]
        sent: list[list[str]] = [[] for _ in sockets]

        async def caught_up() -> None:
            """Every socket has the events of what was written so far: each event reads
            the data as it is when resolved, so the next write waits for them."""
            for socket, texts in zip(sockets, sent, strict=True):
                texts.extend(await drained(socket))

        order = await acme.create_order(bob["id"], [("A-1", 2, 150), ("B-2", 1, 99)])
        await caught_up()
        paid = await update_status(acme, order, "PAID")
        await caught_up()
        await acme.data(
            "mutation($i: DeleteInput!) { deleteOrder(input: $i) { deletedId } }",
            {"i": {"id": order["id"], "expectedVersion": paid["version"]}},
        )
        await caught_up()
        await acme.add_member(group["id"], bob["id"])
        await caught_up()
        await acme.data(
            "mutation($g: ID!, $u: ID!) { removeGroupMember(groupId: $g, userId: $u) { id } }",
            {"g": group["id"], "u": bob["id"]},
        )
        await caught_up()
        team = await create_node(acme, "Team", root["id"])
        await caught_up()
        await acme.data(
            "mutation($i: MoveOrgNodeInput!) { moveOrgNode(input: $i) { node { id } } }",
            {
                "i": {
                    "id": team["id"],
                    "expectedVersion": team["version"],
                    "newParentId": other["id"],
                }
            },
        )
        await caught_up()
        found = await acme.data("query($id: ID!) { user(id: $id) { version } }", {"id": bob["id"]})
        await acme.data(
            "mutation($i: DeleteInput!) { deleteUser(input: $i) { deletedId } }",
            {"i": {"id": bob["id"], "expectedVersion": found["user"]["version"]}},
        )
        await caught_up()
        compiled_admin, compiled_member, core_admin, core_member = sent
        compiled = by_subscription(compiled_admin + compiled_member)
        core = by_subscription(core_admin + core_member)
    assert compiled == core
    # bob's versions count his memberships: three user events
    assert [len(compiled[key]) for key in "ogux"] == [3, 2, 3, 1]
    assert len(compiled["n"]) >= 3
    shown = "".join(text for texts in compiled.values() for text in texts)
    assert shown.count('"FORBIDDEN"') == 4  # carol's: bob's email thrice, and bob's orders
    assert shown.count('"DELETED"') >= 4  # the order, the member, the moved node, the user


class CountingRun(Run):
    started = 0

    def start(self) -> Any:
        CountingRun.started += 1
        return super().start()


async def test_each_event_runs_the_compiled_plan(
    sockets: Sockets, acme: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(events, "Run", CountingRun)
    CountingRun.started = 0
    bob = await acme.create_user("bob@acme.test", "Bob")
    async with sockets() as open_session:
        ws = await open_session(acme.token)
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await settle()
        await acme.create_order(bob["id"], [("A-1", 1, 100)])
        (sent,) = await drained(ws)
    assert orjson.loads(sent)["payload"]["data"]["orderChanged"]["change"] == "CREATED"
    assert CountingRun.started == 1


async def test_subscribers_with_the_same_rights_share_a_resolution_others_do_not(
    sockets: Sockets,
    acme: Api,
    member_token: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    resolved: list[str] = []
    resolve = events.Events._resolve

    async def counted(self: events.Events, event: Any) -> tuple[events.Payload, bool]:
        resolved.append(self.ctx.request_id)
        return await resolve(self, event)

    monkeypatch.setattr(events.Events, "_resolve", counted)
    bob = await acme.create_user("bob@acme.test", "Bob")
    carol = await acme.create_user("carol@acme.test", "Carol")
    await settle()
    async with sockets() as open_session:
        # two admins, the owner and another member (the same roles as the owner)
        tokens = [acme.token, acme.token]
        tokens += [member_token(local_id(user["id"], "User")) for user in (bob, carol)]
        sockets_ = [await open_session(token) for token in tokens]
        for ws in sockets_:
            await subscribe(ws, "1", USER, {"id": bob["id"]})
        await settle()
        await acme.data(
            "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id } }",
            {"i": {"id": bob["id"], "expectedVersion": bob["version"], "name": "Robert"}},
        )
        admin, twin, owner, member = [(await drained(ws))[0] for ws in sockets_]
    assert len(resolved) == 3
    assert admin == twin
    assert orjson.loads(owner)["payload"]["data"]["userChanged"]["user"]["email"] == (
        "bob@acme.test"
    )
    theirs = orjson.loads(member)["payload"]
    assert theirs["data"]["userChanged"]["user"]["email"] is None
    assert theirs["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert owner != member

"""A spec's subscriptions served by `keygraph serve`'s app over graphql-transport-ws, on both
stores (tests/codegen/cases/social, whose table has a stream): a write made through the
library, outside GraphQL, reaches the item's subscribers; another tenant's item never does;
the get pattern's rule decides at subscribe; a cursor resumes after its event, with nothing
lost or repeated; subscriptions differing in their literals share one shape; and what a
hostile client sends closes its socket or is refused."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect
from starlette.applications import Starlette

from keygraph import writes
from keygraph.serve import create_app
from keygraph.serve.manifest import sha256
from keygraph.serve.package import served
from keygraph.serve.persisted import Documents
from keygraph.serve.served import Served
from keygraph.store import Session
from keygraph.tokens import issue
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, CODEC, Compiled
from tests.keygraph.api.ws_sockets import Open, sockets
from tests.waiting import until

SPEC = CASES / "social" / "spec.toml"
SECRET = "subscriptions-secret-" + "s" * 32
WATCH = """subscription($id: ID!, $after: String) {
  memberChanged(memberId: $id, after: $after) { kind cursor member { handle version } }
}"""


@dataclass
class Social:
    """The app under test, its parts, and the Member's writes for the library's calls."""

    served: Served
    app: Starlette
    members: writes.Writes
    posts: writes.Writes

    def feeds(self, count: int) -> Callable[[], bool]:
        assert self.served.realtime is not None
        hub = self.served.realtime.hub
        return lambda: hub.open_feeds == count

    async def write(self, tenant: str, operation: str, *args: Any) -> Any:
        """A write through the library, as the server itself (no caller)."""
        session = Session(self.served.store, CODEC)
        return await getattr(writes, operation)(session, tenant, self.members, *args)

    @contextlib.asynccontextmanager
    async def connections(self) -> AsyncIterator[Open]:
        """Opens sockets on one transport: `await open(tenant, role, init)`, each closed
        when the block ends."""
        async with sockets(self.app, SECRET) as open_socket:
            yield open_socket

    @contextlib.asynccontextmanager
    async def socket(
        self, tenant: str = "acme", role: str = "member", init: bool = True
    ) -> AsyncIterator[AsyncWebSocketSession]:
        async with self.connections() as open_socket:
            yield await open_socket(tenant, role, init)


@pytest.fixture
async def social(
    compiled: Callable[[Path], Compiled], store_factory: StoreFactory, kind: str
) -> AsyncIterator[Social]:
    package = compiled(SPEC)
    store = await store_factory(kind, package.table)
    app_served = served(package.package.__name__, store, SECRET)
    built = create_app(app_served)
    api = package.module("api").API
    async with built.router.lifespan_context(built):
        yield Social(app_served, built, api.writes["Member"], api.writes["Post"])


async def subscribe(ws: AsyncWebSocketSession, ident: str, **variables: Any) -> None:
    payload = {"query": WATCH, "variables": variables}
    await ws.send_json({"type": "subscribe", "id": ident, "payload": payload})


async def event(ws: AsyncWebSocketSession) -> dict[str, Any]:
    message: dict[str, Any] = await ws.receive_json(timeout=20)
    assert message["type"] == "next", message
    change: dict[str, Any] = message["payload"]["data"]["memberChanged"]
    return change


def shown(change: dict[str, Any]) -> tuple[str, str, int]:
    return change["kind"], change["member"]["handle"], change["member"]["version"]


async def test_library_writes_reach_subscribers_and_a_cursor_resumes(social: Social) -> None:
    async with social.socket() as ws:
        await subscribe(ws, "a", id="m1")
        await until(social.feeds(1), "the subscription's feed")
        await social.write("globex", "create", {"member_id": "m1", "handle": "other", "name": "G"})
        await social.write("acme", "create", {"member_id": "m1", "handle": "ann", "name": "Ann"})
        first = await event(ws)
        assert shown(first) == ("CREATED", "ann", 1)
        await social.write("acme", "update", {"member_id": "m1"}, {"handle": "anna"}, 1)
        await social.write("acme", "update", {"member_id": "m1"}, {"handle": "anne"}, 2)
        assert shown(await event(ws)) == ("UPDATED", "anna", 2)
        assert shown(await event(ws)) == ("UPDATED", "anne", 3)
        await ws.send_json({"type": "complete", "id": "a"})
        await until(social.feeds(0), "the feed to close")
        await social.write("acme", "delete", {"member_id": "m1"})
        await subscribe(ws, "b", id="m1", after=first["cursor"])
        resumed = [shown(await event(ws)) for _ in range(3)]
        assert resumed == [("UPDATED", "anna", 2), ("UPDATED", "anne", 3), ("DELETED", "anne", 3)]
        await ws.send_json({"type": "ping"})
        assert await ws.receive_json(timeout=15) == {"type": "pong"}  # nothing else came


POSTS = """subscription($m: ID!, $after: String) {
  postsByChanged(memberId: $m, after: $after) { kind cursor post { text } }
}"""


async def test_a_query_patterns_subscribers_see_the_items_it_reads(social: Social) -> None:
    """postsByChanged follows the posts posts_by reads: another member's post, another
    tenant's, and the member's own profile in the same partition are not its items."""
    session = Session(social.served.store, CODEC)
    for tenant, who in (("acme", "m1"), ("acme", "m2"), ("globex", "m1")):
        await social.write(tenant, "create", {"member_id": who, "handle": who, "name": "N"})
    async with social.socket() as ws:
        payload: dict[str, Any] = {"query": POSTS, "variables": {"m": "m1"}}
        await ws.send_json({"type": "subscribe", "id": "p", "payload": payload})
        await until(social.feeds(1), "the subscription's feed")
        for tenant, who in (("acme", "m2"), ("globex", "m1")):
            await writes.create(session, tenant, social.posts, {"member_id": who, "text": "no"})
        made = await writes.create(session, "acme", social.posts, {"member_id": "m1", "text": "hi"})
        await social.write("acme", "update", {"member_id": "m1"}, {"name": "Ann"}, 1)
        key = {"member_id": "m1", "post_id": made.post_id}
        await writes.delete(session, "acme", social.posts, key)

        async def post_event() -> dict[str, Any]:
            message = await ws.receive_json(timeout=20)
            assert message["type"] == "next", message
            change: dict[str, Any] = message["payload"]["data"]["postsByChanged"]
            return change

        first = await post_event()
        assert (first["kind"], first["post"]) == ("CREATED", {"text": "hi"})
        assert (await post_event())["kind"] == "DELETED"
        await ws.send_json({"type": "ping"})
        assert await ws.receive_json(timeout=15) == {"type": "pong"}  # nothing else came
        payload["variables"]["after"] = first["cursor"]
        await ws.send_json({"type": "subscribe", "id": "q", "payload": payload})
        assert (await post_event())["kind"] == "DELETED"
        await ws.send_json({"type": "ping"})
        assert await ws.receive_json(timeout=15) == {"type": "pong"}  # nothing else came


async def test_the_rule_decides_at_subscribe(social: Social) -> None:
    async with social.socket(role="visitor") as ws:
        await subscribe(ws, "a", id="m1")
        message = await ws.receive_json(timeout=15)
        assert message["type"] == "error"
        assert message["payload"][0]["extensions"]["code"] == "FORBIDDEN"
    async with social.socket() as ws:
        await subscribe(ws, "a", id="m1", after="not-a-cursor")
        message = await ws.receive_json(timeout=15)
        assert message["payload"][0]["extensions"]["code"] == "INVALID_CURSOR"
    assert social.feeds(0)()


async def test_hostile_clients_are_closed_or_refused(social: Social) -> None:
    async with social.socket(init=False) as ws:
        await subscribe(ws, "a", id="m1")  # before connection_init: unauthorized
        with pytest.raises(WebSocketDisconnect) as closed:
            await ws.receive_json(timeout=15)
        assert closed.value.code == 4401
    async with social.socket(init=False) as ws:
        await ws.send_json({"type": "connection_init", "payload": {"authorization": "Bearer x"}})
        with pytest.raises(WebSocketDisconnect) as closed:
            await ws.receive_json(timeout=15)
        assert closed.value.code == 4403
    async with social.socket() as ws:
        await ws.send_text("x" * (200 * 1024))
        with pytest.raises(WebSocketDisconnect) as closed:
            await ws.receive_json(timeout=15)
        assert closed.value.code == 4400
    async with social.socket() as ws:
        for ident in range(social.served.max_subscriptions):
            await subscribe(ws, str(ident), id=f"m{ident}")
        await until(social.feeds(social.served.max_subscriptions), "every feed")
        await subscribe(ws, "one-more", id="m1")
        refused = await ws.receive_json(timeout=15)
        assert refused["type"] == "error"
        assert refused["id"] == "one-more"
        await subscribe(ws, "0", id="m1")
        with pytest.raises(WebSocketDisconnect) as closed:
            await ws.receive_json(timeout=15)
        assert closed.value.code == 4409
    await until(social.feeds(0), "every feed closed with its socket")


async def test_a_tenant_holds_at_most_its_connections(
    compiled: Callable[[Path], Compiled], store_factory: StoreFactory
) -> None:
    package = compiled(SPEC)
    store = await store_factory("embedded", package.table)
    app_served = replace(served(package.package.__name__, store, SECRET), max_connections=2)
    built = create_app(app_served)
    api = package.module("api").API
    social = Social(app_served, built, api.writes["Member"], api.writes["Post"])
    async with built.router.lifespan_context(built), social.connections() as open_socket:
        first = await open_socket()
        await open_socket()
        third = await open_socket(init=False)
        token = issue(SECRET, "acme", "m1", roles=["member"])
        await third.send_json(
            {"type": "connection_init", "payload": {"authorization": f"Bearer {token}"}}
        )
        with pytest.raises(WebSocketDisconnect) as closed:
            await third.receive_json(timeout=15)
        assert closed.value.code == 4429
        await open_socket(tenant="globex")  # another tenant's places are its own
        await first.send_text("not a message")  # the server closes it (4400)
        held = built.state.places.held
        await until(lambda: held.get("acme") == 1, "the first socket's place back")
        await open_socket()  # the place came back with the socket


async def test_a_trusted_documents_app_subscribes_only_by_its_manifest(social: Social) -> None:
    trusted = replace(social.served, persisted=Documents({sha256(WATCH): WATCH}))
    only = Social(trusted, create_app(trusted), social.members, social.posts)
    async with only.socket() as ws:
        text = {"query": WATCH + " ", "variables": {"id": "m1"}}
        await ws.send_json({"type": "subscribe", "id": "text", "payload": text})
        refused = await ws.receive_json(timeout=15)
        assert (refused["type"], refused["id"]) == ("error", "text")
        assert refused["payload"][0]["extensions"]["code"] == "PERSISTED_QUERY_REQUIRED"
        persisted = {"version": 1, "sha256Hash": sha256(WATCH)}
        by_hash = {"extensions": {"persistedQuery": persisted}, "variables": {"id": "m1"}}
        await ws.send_json({"type": "subscribe", "id": "hash", "payload": by_hash})
        await until(only.feeds(1), "the subscription by hash")
        await social.write("acme", "create", {"member_id": "m1", "handle": "ann", "name": "Ann"})
        assert (await ws.receive_json(timeout=20))["id"] == "hash"
    await until(only.feeds(0), "the feed closed with its socket")


async def test_subscriptions_differing_in_literals_share_one_shape(social: Social) -> None:
    def watch(member: str, after: str = "") -> dict[str, Any]:
        cursor = f', after: "{after}"' if after else ""
        query = WATCH.replace("$id, after: $after", f'"{member}"{cursor}')
        return {"query": query.replace("($id: ID!, $after: String)", "")}

    async with social.socket() as ws:
        refusals = []
        for ident, cursor in (("x", "not-a-cursor"), ("y", "not-a-cursor-either")):
            await ws.send_json({"type": "subscribe", "id": ident, "payload": watch("m1", cursor)})
            message = await ws.receive_json(timeout=15)
            assert message["type"] == "error"
            refusals.append([(e["extensions"]["code"], e["locations"]) for e in message["payload"]])
        assert refusals[0] == refusals[1] == [("INVALID_CURSOR", [{"line": 2, "column": 3}])]
        assert len(social.served.documents) == 1  # the second by the first's shape
        await ws.send_json({"type": "subscribe", "id": "a", "payload": watch("m1")})
        await ws.send_json({"type": "subscribe", "id": "b", "payload": watch("m2")})
        await until(social.feeds(2), "both subscriptions' feeds")
        assert len(social.served.documents) == 2  # so "b" too
        await social.write("acme", "create", {"member_id": "m2", "handle": "bo", "name": "Bo"})
        message = await ws.receive_json(timeout=20)
        assert (message["id"], shown(message["payload"]["data"]["memberChanged"])) == (
            "b",
            ("CREATED", "bo", 1),
        )

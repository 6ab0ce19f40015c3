"""An extension's subscriptions (keygraph.api.changes) served by `keygraph serve` on the
social case: one following two of the spec's subscriptions sends their changes as one
stream in the order they were written, resumes after a cursor with nothing lost or
repeated, and one follows a watch `changes = false` keeps with no field; its guard refuses
at subscribe, a followed pattern's rule before anything is read, and a stream opening what
its declaration does not follow ends with INTERNAL, its feed closed."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from httpx_ws import AsyncWebSocketSession
from starlette.applications import Starlette

from keygraph import writes
from keygraph.api import Extension, changes
from keygraph.caller import Caller
from keygraph.serve import create_app
from keygraph.serve.package import served
from keygraph.serve.served import Served
from keygraph.store import Session
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, CODEC, Compiled
from tests.keygraph.api.ws_sockets import sockets
from tests.waiting import until

SPEC = CASES / "social" / "spec.toml"
SECRET = "extension-subscriptions-" + "s" * 32
SDL = """
"A change to a member's profile or posts, or to a handle's claim."
type Activity {
  "The spec subscription it came by."
  by: String!
  kind: ChangeKind!
  text: String
  cursor: String!
}

extend type Subscription {
  memberActivity(memberId: ID!, after: String): Activity!
  claimChanged(handle: String!, after: String): Activity!
  stray(memberId: ID!): Activity!
}
"""
ACTIVITY = """subscription($m: ID!, $after: String) {
  memberActivity(memberId: $m, after: $after) { by kind text cursor }
}"""
CLAIM = 'subscription { claimChanged(handle: "ann") { by kind text } }'
STRAY = 'subscription { stray(memberId: "m1") { by } }'


def may_follow(caller: Caller, *, member_id: str) -> bool:
    """An admin, or the member itself."""
    return "admin" in caller.roles or caller.owns(member_id)


def _activity(change: Any) -> dict[str, Any]:
    """A post's text, or the member a profile or a claim names."""
    text = getattr(change.item, "text", None) or getattr(change.item, "member_id", None)
    return {"by": change.by, "kind": change.kind, "text": text, "cursor": change.cursor}


def extension() -> Extension:
    extended = Extension(SDL)

    @extended.field(
        "Subscription.memberActivity", guard=may_follow, follows=("memberChanged", "postsByChanged")
    )
    async def member_activity(
        _root: Any, info: Any, member_id: str, after: str | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        key = {"member_id": member_id}
        async for change in changes(info, after, memberChanged=key, postsByChanged=key):
            yield _activity(change)

    @extended.field("Subscription.claimChanged", public=True, follows="handleChanged")
    async def claim_changed(
        _root: Any, info: Any, handle: str, after: str | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        async for change in changes(info, after, handleChanged={"handle": handle}):
            yield _activity(change)

    @extended.field("Subscription.stray", public=True, follows="memberChanged")
    async def stray(_root: Any, info: Any, member_id: str) -> AsyncIterator[dict[str, Any]]:
        async for change in changes(info, None, postsByChanged={"member_id": member_id}):
            yield _activity(change)

    return extended


class Social:
    """The social case served with the extension, and the library's writes to it."""

    def __init__(self, app_served: Served, app: Starlette, package: Compiled) -> None:
        self.served = app_served
        self.app = app
        self.api = package.module("api").API

    def feeds(self, count: int) -> Callable[[], bool]:
        realtime = self.served.realtime
        assert realtime is not None
        return lambda: realtime.hub.open_feeds == count

    async def write(self, operation: str, entity: str, *args: Any) -> Any:
        session = Session(self.served.store, CODEC)
        return await getattr(writes, operation)(session, "acme", self.api.writes[entity], *args)

    @contextlib.asynccontextmanager
    async def socket(
        self, subject: str = "m1", role: str = "member"
    ) -> AsyncIterator[AsyncWebSocketSession]:
        async with sockets(self.app, SECRET) as open_socket:
            yield await open_socket("acme", role, subject=subject)


@pytest.fixture
async def social(
    compiled: Callable[[Path], Compiled], store_factory: StoreFactory
) -> AsyncIterator[Social]:
    package = compiled(SPEC)
    store = await store_factory("embedded", package.table)
    app_served = served(package.package.__name__, store, SECRET, [extension()])
    built = create_app(app_served)
    async with built.router.lifespan_context(built):
        yield Social(app_served, built, package)


async def subscribe(ws: AsyncWebSocketSession, ident: str, query: str, **variables: Any) -> None:
    payload = {"query": query, "variables": variables}
    await ws.send_json({"type": "subscribe", "id": ident, "payload": payload})


async def activity(ws: AsyncWebSocketSession) -> dict[str, Any]:
    message: dict[str, Any] = await ws.receive_json(timeout=20)
    assert message["type"] == "next", message
    (change,) = message["payload"]["data"].values()
    found: dict[str, Any] = change
    return found


def shown(change: dict[str, Any]) -> tuple[str, str, str | None]:
    return change["by"], change["kind"], change["text"]


async def nothing_more(ws: AsyncWebSocketSession) -> None:
    await ws.send_json({"type": "ping"})
    assert await ws.receive_json(timeout=15) == {"type": "pong"}


async def test_two_followed_subscriptions_make_one_stream_that_resumes(social: Social) -> None:
    async with social.socket() as ws:
        await subscribe(ws, "a", ACTIVITY, m="m1")
        await until(social.feeds(1), "the subscription's feed")
        await social.write("create", "Member", {"member_id": "m1", "handle": "ann", "name": "A"})
        await social.write("create", "Member", {"member_id": "m2", "handle": "bo", "name": "B"})
        post = await social.write("create", "Post", {"member_id": "m1", "text": "hi"})
        await social.write("create", "Post", {"member_id": "m2", "text": "not m1's"})
        await social.write("update", "Member", {"member_id": "m1"}, {"name": "Ann"}, 1)
        await social.write("delete", "Post", {"member_id": "m1", "post_id": post.post_id})
        first = await activity(ws)
        rest = [shown(await activity(ws)) for _ in range(3)]
        assert [shown(first), *rest] == [
            ("memberChanged", "CREATED", "m1"),
            ("postsByChanged", "CREATED", "hi"),
            ("memberChanged", "UPDATED", "m1"),
            ("postsByChanged", "DELETED", "hi"),
        ]
        await nothing_more(ws)
        await ws.send_json({"type": "complete", "id": "a"})
        await until(social.feeds(0), "the feed to close")
        await subscribe(ws, "b", ACTIVITY, m="m1", after=first["cursor"])
        assert [shown(await activity(ws)) for _ in range(3)] == rest
        await nothing_more(ws)


async def test_a_watch_changes_false_hides_is_followed(social: Social) -> None:
    assert "claimChanged" not in social.api.watches
    assert not social.api.watches["handleChanged"].fielded
    async with social.socket() as ws:
        await subscribe(ws, "c", CLAIM)
        await until(social.feeds(1), "the subscription's feed")
        await social.write("create", "Member", {"member_id": "m1", "handle": "bo", "name": "B"})
        await social.write("create", "Member", {"member_id": "m2", "handle": "ann", "name": "A"})
        assert shown(await activity(ws)) == ("handleChanged", "CREATED", "m2")
        await nothing_more(ws)


@pytest.mark.parametrize(
    ("subject", "role", "query", "variables", "code"),
    [
        ("m2", "member", ACTIVITY, {"m": "m1"}, "FORBIDDEN"),  # the field's guard
        ("v1", "visitor", CLAIM, {}, "FORBIDDEN"),  # public, but get_handle's rule
        ("m1", "member", ACTIVITY, {"m": "m1", "after": "not-a-cursor"}, "INVALID_CURSOR"),
        ("m1", "member", ACTIVITY, {"m": None}, "BAD_USER_INPUT"),
        ("m1", "member", STRAY, {}, "INTERNAL"),  # opens what it does not declare
    ],
)
async def test_refused_before_anything_is_read(
    social: Social, subject: str, role: str, query: str, variables: dict[str, Any], code: str
) -> None:
    async with social.socket(subject, role) as ws:
        await subscribe(ws, "r", query, **variables)
        message = await ws.receive_json(timeout=15)
        assert message["type"] == "error", message
        assert message["payload"][0]["extensions"]["code"] == code
        await social.write("create", "Member", {"member_id": "m1", "handle": "ann", "name": "A"})
        await nothing_more(ws)
    assert social.feeds(0)()

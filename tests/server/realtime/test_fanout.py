"""One change fanned out over real sockets to many subscribers of one worker, each getting
what its caller may see: a tenant's admins the whole user, its members the user without
its email (null with FORBIDDEN) but for the user itself, and another tenant's subscribers to
the same id nothing, until their own user changes. Subscribers share a connection or have
one each, and several of them use the same subscription id. One caller's subscriptions with
different selections each get their own payload, and every subscriber's cursor, resumed
from, gives exactly the events after it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generated.models.user import User
from generated.table import TABLE
from keygraph.plan import Put
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.settings import Settings
from tests.server.conftest import SECRET
from tests.server.realtime.conftest import bearer, realtime_of
from tests.server.realtime.frames import RawSocket, Served, served, text
from tests.waiting import wait_for

QUERY = "subscription($id: ID!) { userChanged(id: $id) { change user { name email } } }"
NAMES = "subscription($id: ID!) { userChanged(id: $id) { user { name } } }"
EMAILS = "subscription($id: ID!) { userChanged(id: $id) { change user { email } } }"
CURSORS = "subscription($id: ID!) { userChanged(id: $id) { cursor } }"
RESUMING = (
    "subscription($id: ID!, $after: String) "
    "{ userChanged(id: $id, after: $after) { cursor user { name } } }"
)
USER_ID = "VXNlcjp1MQ"  # u1's global id, in either tenant
ADMINS, MEMBERS, OTHERS = 400, 150, 150
"""acme's admins, acme's members other than u1, and globex's admins."""
SHARED = 4
"""Subscriptions of u1 itself, all on one connection."""


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, jwt_secret=SECRET, stream_poll_interval=0.01).resolved()


@pytest.fixture
def app(settings: Settings) -> Iterator[Served]:
    store = EmbeddedStore(TABLE, path=settings.embedded_path)
    with served(settings, store) as running:
        yield running


def write(settings: Settings, tenant: str, name: str) -> None:
    """Puts u1 of `tenant`, named `name`, straight into the store the worker reads."""

    async def put() -> None:
        store = EmbeddedStore(TABLE, path=settings.embedded_path)
        try:
            user = User(
                user_id="u1",
                email=f"u1@{tenant}.test",
                name=name,
                created_at="2026-01-01T00:00:00Z",
                version=1,
            )
            await store.put(Put(item=user.to_item(tenant)))
        finally:
            await store.close()

    asyncio.run(put())


def connect(app: Served, settings: Settings, tenant: str, subject: str, role: str) -> RawSocket:
    ws = app.raw()
    token = issue_token(settings, tenant, subject, roles=[role])
    ws.send(text({"type": "connection_init", "payload": bearer(token)}))
    assert ws.message() == {"type": "connection_ack"}
    return ws


def subscribe(ws: RawSocket, op_id: str, query: str = QUERY, after: str | None = None) -> None:
    variables = {"id": USER_ID} if after is None else {"id": USER_ID, "after": after}
    payload = {"query": query, "variables": variables}
    ws.send(text({"type": "subscribe", "id": op_id, "payload": payload}))


def event(ws: RawSocket) -> tuple[str, Any, list[str]]:
    """The next message's id, its user, and its errors' codes."""
    message = ws.message()
    assert message["type"] == "next", message
    payload = message["payload"]
    codes = [error["extensions"]["code"] for error in payload.get("errors", [])]
    return message["id"], payload["data"]["userChanged"]["user"], codes


def test_one_change_reaches_each_subscriber_as_its_caller_may_see_it(
    app: Served, settings: Settings
) -> None:
    admins = [connect(app, settings, "acme", f"a{n}", "admin") for n in range(ADMINS)]
    members = [connect(app, settings, "acme", f"m{n}", "member") for n in range(MEMBERS)]
    others = [connect(app, settings, "globex", f"g{n}", "admin") for n in range(OTHERS)]
    itself = connect(app, settings, "acme", "u1", "member")
    for n, ws in enumerate(admins + members + others):
        subscribe(ws, "s" if n % 2 else f"s{n}")  # one id for many: one frame for them
    for n in range(SHARED):
        subscribe(itself, f"own{n}")
    everyone = ADMINS + MEMBERS + OTHERS + SHARED
    fanout = realtime_of(app.app).fanout
    wait_for(lambda: fanout.seated == everyone, "every subscription's feed open")

    write(settings, "acme", "first")
    full = {"name": "first", "email": "u1@acme.test"}
    for n, ws in enumerate(admins):
        assert event(ws) == ("s" if n % 2 else f"s{n}", full, [])
    for n, ws in enumerate(members, start=ADMINS):
        assert event(ws) == ("s" if n % 2 else f"s{n}", {**full, "email": None}, ["FORBIDDEN"])
    assert sorted(event(itself) for _ in range(SHARED)) == [
        (f"own{n}", full, []) for n in range(SHARED)
    ]

    write(settings, "globex", "theirs")  # the same id in another tenant: none of acme's
    for n, ws in enumerate(others, start=ADMINS + MEMBERS):
        expected = {"name": "theirs", "email": "u1@globex.test"}
        assert event(ws) == ("s" if n % 2 else f"s{n}", expected, [])

    write(settings, "acme", "second")  # acme's next event is this one, not globex's
    for ws in admins:
        assert event(ws)[1] == {"name": "second", "email": "u1@acme.test"}
    for ws in members:
        assert event(ws)[1] == {"name": "second", "email": None}
    assert [event(itself)[1]["name"] for _ in range(SHARED)] == ["second"] * SHARED


def data(ws: RawSocket) -> Any:
    """The next message's `userChanged`, which is a `next` of id "s" without errors."""
    message = ws.message()
    assert (message["type"], message["id"]) == ("next", "s"), message
    assert "errors" not in message["payload"], message
    return message["payload"]["data"]["userChanged"]


def test_one_callers_selections_each_get_their_own_payload(app: Served, settings: Settings) -> None:
    selections = [NAMES, EMAILS, CURSORS, QUERY] * 3
    sockets = [connect(app, settings, "acme", "a0", "admin") for _ in selections]
    for ws, query in zip(sockets, selections, strict=True):
        subscribe(ws, "s", query)  # one caller, one id: only the selection tells them apart
    fanout = realtime_of(app.app).fanout
    wait_for(lambda: fanout.seated == len(sockets), "every subscription's feed open")

    write(settings, "acme", "first")
    for ws, query in zip(sockets, selections, strict=True):
        got = data(ws)
        if query == NAMES:
            assert got == {"user": {"name": "first"}}
        elif query == EMAILS:
            assert got == {"change": "CREATED", "user": {"email": "u1@acme.test"}}
        elif query == CURSORS:
            assert list(got) == ["cursor"]
            assert isinstance(got["cursor"], str)
        else:
            full = {"name": "first", "email": "u1@acme.test"}
            assert got == {"change": "CREATED", "user": full}


def test_each_subscribers_cursor_resumes_exactly_after_its_event(
    app: Served, settings: Settings
) -> None:
    live = [connect(app, settings, "acme", "a0", "admin") for _ in range(6)]
    for ws in live:
        subscribe(ws, "s", RESUMING)
    fanout = realtime_of(app.app).fanout
    wait_for(lambda: fanout.seated == len(live), "every subscription's feed open")
    write(settings, "acme", "a")
    first = [data(ws)["cursor"] for ws in live]
    write(settings, "acme", "b")
    assert [data(ws)["user"]["name"] for ws in live] == ["b"] * len(live)
    # two subscribers resumed after "a", one replaying more than the other, beside the live
    early = connect(app, settings, "acme", "a0", "admin")
    subscribe(early, "s", RESUMING, after=first[0])
    assert data(early)["user"]["name"] == "b"
    write(settings, "acme", "c")
    late = connect(app, settings, "acme", "a0", "admin")
    subscribe(late, "s", RESUMING, after=first[1])
    assert [data(late)["user"]["name"] for _ in range(2)] == ["b", "c"]
    wait_for(lambda: fanout.seated == len(live) + 2, "the resumed subscriptions' feeds open")

    write(settings, "acme", "d")
    everyone = [*live, early, late]
    cursors = []
    for ws in everyone:
        if ws is not late:
            assert data(ws)["user"]["name"] == "c"
        event = data(ws)
        assert event["user"]["name"] == "d"
        cursors.append(event["cursor"])
    write(settings, "acme", "e")
    resumed = [connect(app, settings, "acme", "a0", "admin") for _ in cursors]
    for again, cursor in zip(resumed, cursors, strict=True):
        subscribe(again, "s", RESUMING, after=cursor)
        assert data(again)["user"]["name"] == "e"  # what came after its own "d"
    write(settings, "acme", "f")
    assert [data(again)["user"]["name"] for again in resumed] == ["f"] * len(resumed)

"""One change fanned out to many subscribers of one worker, each getting what its caller may
see: a tenant's admins the whole user, its members the user without its email (null with
FORBIDDEN) but for the user itself, and another tenant's subscribers to the same id
nothing, until their own user changes. Subscribers have a connection each or share one,
and many use the same subscription id."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from httpx_ws import AsyncWebSocketSession
from starlette.applications import Starlette

from generated.models.user import User
from keygraph.plan import Put
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.settings import Settings
from tests.ids import to_global_id
from tests.server.conftest import SECRET
from tests.server.realtime.capturing_store import CapturingStore
from tests.server.realtime.conftest import Sockets, receive, settle, subscribe
from tests.server.realtime.memory_stream import MemoryStream
from tests.server.realtime.test_fields import nothing_more
from tests.server.realtime.test_served import STARTED
from tests.waiting import until

QUERY = "subscription($id: ID!) { userChanged(id: $id) { change user { name email } } }"
USER_ID = to_global_id("User", "u1")
"""u1's global id, in either tenant."""
ADMINS, MEMBERS, OTHERS = 40, 15, 15
"""acme's admins, acme's members other than u1, and globex's admins."""
SHARED = 4
"""Subscriptions of u1 itself, all on one connection."""


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Room for every subscriber: on a connection, of a tenant and of the worker."""
    return Settings(
        data_dir=tmp_path,
        jwt_secret=SECRET,
        stream_poll_interval=0.01,
        max_subscriptions_per_connection=SHARED,
        max_subscriptions_per_tenant=ADMINS + MEMBERS + SHARED,
        max_subscriptions_per_worker=ADMINS + MEMBERS + SHARED + OTHERS,
    ).resolved()


def writer(store: EmbeddedStore, stream: MemoryStream) -> Callable[[str, str], Any]:
    """Puts u1 of a tenant, named as asked, straight into the store the app reads."""

    async def write(tenant: str, name: str) -> None:
        user = User(
            user_id="u1",
            email=f"u1@{tenant}.test",
            name=name,
            created_at="2026-01-01T00:00:00Z",
            version=1,
        )
        await CapturingStore(store, stream).put(Put(item=user.to_item(tenant)))

    return write


async def event(ws: AsyncWebSocketSession) -> tuple[str, Any, list[str]]:
    """The next message's id, its user, and its errors' codes."""
    message = await receive(ws)
    assert message["type"] == "next", message
    payload = message["payload"]
    codes = [error["extensions"]["code"] for error in payload.get("errors", [])]
    return message["id"], payload["data"]["userChanged"]["user"], codes


async def test_one_change_reaches_each_subscriber_as_its_caller_may_see_it(
    app: Starlette,
    sockets: Sockets,
    settings: Settings,
    store: EmbeddedStore,
    stream: MemoryStream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "keygraph.serve")
    write = writer(store, stream)

    def started() -> int:
        return sum(r.getMessage() == STARTED for r in caplog.records)

    async with sockets() as open_session:

        async def subscriber(tenant: str, subject: str, role: str) -> AsyncWebSocketSession:
            ws = await open_session(issue_token(settings, tenant, subject, roles=[role]))
            await subscribe(ws, "1", QUERY, {"id": USER_ID})
            return ws

        admins = [await subscriber("acme", f"a{n}", "admin") for n in range(ADMINS)]
        members = [await subscriber("acme", f"m{n}", "member") for n in range(MEMBERS)]
        others = [await subscriber("globex", f"g{n}", "admin") for n in range(OTHERS)]
        itself = await open_session(issue_token(settings, "acme", "u1", roles=["member"]))
        for n in range(SHARED):
            await subscribe(itself, str(n), QUERY, {"id": USER_ID})
        subscribers = ADMINS + MEMBERS + OTHERS + SHARED
        await until(lambda: started() == subscribers, "every subscription to start")

        await write("acme", "Ann")
        whole = {"name": "Ann", "email": "u1@acme.test"}
        for ws in admins:
            assert await event(ws) == ("1", whole, [])
        for ws in members:
            assert await event(ws) == ("1", {"name": "Ann", "email": None}, ["FORBIDDEN"])
        assert sorted([await event(itself) for _ in range(SHARED)]) == [
            (str(n), whole, []) for n in range(SHARED)
        ]
        await write("globex", "Gus")
        for ws in others:  # their first event: acme's change never reached them
            assert await event(ws) == ("1", {"name": "Gus", "email": "u1@globex.test"}, [])
        await settle()
        for ws in [*admins, *members, itself]:
            await nothing_more(ws)  # globex's change reached no one of acme

"""What `keygraph serve` tells a subscriber beside its events, as the repository's server
does: SUBSCRIBER_TOO_SLOW for one that fell more changes behind than its feed holds (an
`error`, nothing logged as a bug), and EVENTS_TRIMMED for a cursor older than the stream
keeps (one `next` with that error and no data, then the oldest changes kept), on a spec's
subscription and on an extension's that follows it (tests/codegen/cases/social)."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from httpx_ws import AsyncWebSocketSession

from keygraph import writes
from keygraph.api import Extension, changes
from keygraph.plan import Get, Item, Put
from keygraph.realtime import feed
from keygraph.serve import create_app
from keygraph.serve.package import served
from keygraph.store import Session
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.streams import RETENTION_SECONDS
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CODEC, Compiled
from tests.keygraph.api.test_subscriptions import POSTS, SECRET, SPEC, WATCH, Social
from tests.waiting import until

ACTIVITY = """subscription($m: ID!, $after: String) {
  memberActivity(memberId: $m, after: $after) { kind text cursor }
}"""
QUEUED = 2
"""The changes a feed holds in these tests before its subscriber is too slow."""


def extension() -> Extension:
    extended = Extension(
        "type Activity { kind: ChangeKind! text: String cursor: String! }\n"
        "extend type Subscription { memberActivity(memberId: ID!, after: String): Activity! }"
    )

    @extended.field(
        "Subscription.memberActivity", public=True, follows=("memberChanged", "postsByChanged")
    )
    async def member_activity(
        _root: Any, info: Any, member_id: str, after: str | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        key = {"member_id": member_id}
        async for change in changes(info, after, memberChanged=key, postsByChanged=key):
            text = getattr(change.item, "text", None) or change.item.handle
            yield {"kind": change.kind, "text": text, "cursor": change.cursor}

    return extended


async def social_of(
    compiled: Callable[[Path], Compiled], store_factory: StoreFactory, kind: str
) -> AsyncIterator[Social]:
    """The social case served with the extension on a store of `kind`."""
    package = compiled(SPEC)
    store = await store_factory(kind, package.table)
    app_served = served(package.package.__name__, store, SECRET, [extension()])
    built = create_app(app_served)
    api = package.module("api").API
    async with built.router.lifespan_context(built):
        yield Social(app_served, built, api.writes["Member"], api.writes["Post"])


@pytest.fixture
async def embedded(
    compiled: Callable[[Path], Compiled], store_factory: StoreFactory
) -> AsyncIterator[Social]:
    async for made in social_of(compiled, store_factory, "embedded"):
        yield made


async def send(ws: AsyncWebSocketSession, ident: str, query: str, **variables: Any) -> None:
    payload = {"query": query, "variables": variables}
    await ws.send_json({"type": "subscribe", "id": ident, "payload": payload})


async def receive(ws: AsyncWebSocketSession) -> dict[str, Any]:
    message: dict[str, Any] = await ws.receive_json(timeout=20)
    return message


def data(message: dict[str, Any]) -> dict[str, Any]:
    assert message["type"] == "next", message
    (shown,) = message["payload"]["data"].values()
    found: dict[str, Any] = shown
    return found


def text(message: dict[str, Any]) -> str:
    """The post's text an event shows (the spec's subscription shows the post)."""
    shown = data(message)
    found: str = shown["post"]["text"] if "post" in shown else shown["text"]
    return found


async def nothing_more(ws: AsyncWebSocketSession) -> None:
    await ws.send_json({"type": "ping"})
    assert await ws.receive_json(timeout=15) == {"type": "pong"}


async def template(social: Social) -> Item:
    """A post of m1's written through the library, as stored: what posts_at_once copies."""
    session = Session(social.served.store, CODEC)
    made = await writes.create(session, "acme", social.posts, {"member_id": "m1", "text": "x"})
    item = await social.served.store.get(
        Get({"PK": "T#acme#MEMBER#m1", "SK": f"POST#{made.post_id}"})
    )
    assert item is not None
    return item


async def posts_at_once(social: Social, post: Item, texts: list[str]) -> None:
    """Posts of m1, copies of `post`, written in one batch: the stream's reader hands them
    on together, before any subscriber's task runs."""
    copies = []
    for at, text in enumerate(texts):
        ident = f"{post['post_id']}-{at}"
        copies.append(Put({**post, "SK": f"POST#{ident}", "post_id": ident, "text": text}))
    await social.served.store.batch_write(copies)


@pytest.mark.parametrize("query", [POSTS, ACTIVITY], ids=["spec", "extension"])
async def test_a_subscriber_too_far_behind_ends_subscriber_too_slow(
    embedded: Social,
    query: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Its other subscriptions go on, and it may subscribe again under the same id. On the
    embedded store, where a batch is one transaction the reader reads whole."""
    social = embedded
    monkeypatch.setattr(feed, "MAX_QUEUED", QUEUED)
    caplog.set_level(logging.WARNING)
    await social.write("acme", "create", {"member_id": "m1", "handle": "ann", "name": "Ann"})
    post = await template(social)
    async with social.socket() as ws:
        await send(ws, "kept", WATCH, id="m1")
        await send(ws, "slow", query, m="m1")
        await until(social.feeds(2), "the subscriptions' feeds")
        await posts_at_once(social, post, [f"p{at}" for at in range(QUEUED + 3)])
        got = [await receive(ws) for _ in range(QUEUED + 1)]
        assert [(m["id"], m["type"]) for m in got] == [("slow", "next")] * QUEUED + [
            ("slow", "error")
        ]
        assert [text(m) for m in got[:-1]] == ["p0", "p1"]
        (error,) = got[-1]["payload"]
        assert error["extensions"]["code"] == "SUBSCRIBER_TOO_SLOW"
        assert error["message"] == "the subscriber fell too far behind its events"
        await until(social.feeds(1), "the lost feed closed")
        await nothing_more(ws)
        await send(ws, "slow", query, m="m1")  # its id is free again
        await until(social.feeds(2), "the feed opened again")
        await social.write("acme", "update", {"member_id": "m1"}, {"handle": "anna"}, 1)
        got = [await receive(ws) for _ in range(2 if query == ACTIVITY else 1)]
        updated = ("kept", "slow") if query == ACTIVITY else ("kept",)
        assert {m["id"]: data(m)["kind"] for m in got} == dict.fromkeys(updated, "UPDATED")
        await nothing_more(ws)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def age(store: EmbeddedStore, seconds: float) -> None:
    """Moves the change log's records and shards that far back, as if written so long ago."""
    with closing(sqlite3.connect(store.path)) as conn, conn:
        conn.execute("UPDATE stream_changes SET at = at - ?", (seconds,))
        conn.execute("UPDATE stream_shards SET opened_at = opened_at - ?", (seconds,))


def trimmed(message: dict[str, Any]) -> None:
    """The notice of a cursor older than the stream keeps, as the repository's server sends."""
    assert message["type"] == "next", message
    assert message["payload"] == {
        "errors": [
            {
                "message": "events after the cursor are no longer kept; replaying from the "
                "oldest kept",
                "extensions": {"code": "EVENTS_TRIMMED"},
            }
        ]
    }


@pytest.mark.parametrize("query", [POSTS, ACTIVITY], ids=["spec", "extension"])
@pytest.mark.parametrize("rotated", [False, True], ids=["in-its-shard", "its-shard-dropped"])
async def test_a_cursor_older_than_the_stream_keeps_is_told_then_the_oldest_replays(
    embedded: Social, query: str, rotated: bool
) -> None:
    """A position past the retention in a shard still kept, or in a shard dropped once a
    write opened another: one notice, then what is kept, then live changes, none twice."""
    social = embedded
    store = social.served.store
    assert isinstance(store, EmbeddedStore)
    session = Session(store, CODEC)
    await social.write("acme", "create", {"member_id": "m1", "handle": "ann", "name": "Ann"})
    async with social.socket() as ws:
        await send(ws, "a", query, m="m1")
        await until(social.feeds(1), "the subscription's feed")
        await writes.create(session, "acme", social.posts, {"member_id": "m1", "text": "old"})
        cursor = data(await receive(ws))["cursor"]
        await writes.create(session, "acme", social.posts, {"member_id": "m1", "text": "gone"})
        assert text(await receive(ws)) == "gone"
        await ws.send_json({"type": "complete", "id": "a"})
        await until(social.feeds(0), "the feed to close")
        age(store, RETENTION_SECONDS + 60)
        if rotated:  # opens a shard past the retention: the next one drops the cursor's
            await writes.create(session, "acme", social.posts, {"member_id": "m1", "text": "2"})
            age(store, RETENTION_SECONDS + 60)
        await writes.create(session, "acme", social.posts, {"member_id": "m1", "text": "kept"})
        await send(ws, "b", query, m="m1", after=cursor)
        trimmed(await receive(ws))
        assert text(await receive(ws)) == "kept"
        await until(social.feeds(1), "the resumed feed")
        await writes.create(session, "acme", social.posts, {"member_id": "m1", "text": "live"})
        assert text(await receive(ws)) == "live"
        await nothing_more(ws)  # told once

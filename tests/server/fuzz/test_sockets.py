"""A WebSocket fuzz over graphql-transport-ws frames and their orders, sent to a served app
over real sockets: init with good, foreign, expiring and broken tokens, subscribe and
complete in any order and with reused ids, pings, pongs, garbage, binary, fragmented and
compressed frames, several messages in one TCP write, a slow reader that never reads, and
an end by close frame, by dropping the socket, or by the server.

After each sequence, once the connection is gone, every counter of places returns to where
it started (connections open, awaiting init, each tenant's share, subscriptions per tenant
and worker, the reader's feeds), no tenant's budget holds a point more than it had, and
nothing was logged as a bug. CI plays a fixed set; KEYGRAPH_FUZZ_EXAMPLES=N plays N random
sequences (`make fuzz`)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from generated.table import TABLE
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.settings import Limits, Settings
from tests.server.conftest import SECRET
from tests.server.fuzz.target import HUNT, generate
from tests.server.realtime.conftest import bearer, realtime_of
from tests.server.realtime.frames import (
    BINARY,
    PING,
    RawSocket,
    Served,
    close,
    deflated,
    fragmented,
    frame,
    served,
    text,
)
from tests.waiting import wait_for

CI_SEQUENCES = 40
IDS = ("a", "b", "c")
QUERIES = {
    "user": ("subscription($id: ID!) { userChanged(id: $id) { change } }", {"id": "VXNlcjp1MQ"}),
    "resume": (
        "subscription($id: ID!, $after: String) { userChanged(id: $id, after: $after) { change } }",
        {"id": "VXNlcjp1MQ", "after": "not-a-cursor"},
    ),
    "orders": (
        "subscription($u: ID!) { orderChanged(userId: $u) { change order { id } } }",
        {"u": "VXNlcjp1Mg"},
    ),
    "query": ("{ viewer { tenant } }", {}),
    "invalid": ("subscription { nope }", {}),
    "bad-variables": ("subscription($id: ID!) { userChanged(id: $id) { change } }", {"id": 5}),
}
TOKENS = ("admin", "member", "other-tenant", "expiring", "garbage", "none")
ENDS = ("close", "drop", "wait")

Action = tuple[Any, ...]
SUBSCRIBE = st.tuples(st.just("subscribe"), st.sampled_from(IDS), st.sampled_from(sorted(QUERIES)))
COMPLETE = st.tuples(st.just("complete"), st.sampled_from(IDS))
ACTIONS: st.SearchStrategy[Action] = st.one_of(
    SUBSCRIBE,
    COMPLETE,
    SUBSCRIBE,
    COMPLETE,
    st.tuples(st.sampled_from(["ping", "pong", "control"])),
    st.tuples(st.just("init"), st.sampled_from(TOKENS)),
    st.tuples(
        st.just("fragmented"),
        st.sampled_from(IDS),
        st.sampled_from(sorted(QUERIES)),
        st.integers(2, 5),
    ),
    st.tuples(st.sampled_from(["binary", "compressed"])),
    st.tuples(st.just("garbage"), st.binary(max_size=12)),
)
"""Subscribe and complete most often; the frames that end a connection least."""
SEQUENCES = st.tuples(
    st.one_of(
        st.just([]),
        st.tuples(st.tuples(st.just("init"), st.sampled_from(TOKENS)), st.booleans()).map(
            lambda first: [first]
        ),
    ),
    st.lists(st.tuples(ACTIONS, st.booleans()), min_size=1, max_size=14),
    st.sampled_from(ENDS),
).map(lambda drawn: (drawn[0] + drawn[1], drawn[2]))
"""Actions (most often after an init), each with whether the write is flushed after it
(else it goes out with the next ones in one write), and how the connection ends."""


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data: Path = tmp_path_factory.mktemp("sockets")
    settings = Settings(
        data_dir=data,
        jwt_secret=SECRET,
        ws_init_timeout=1.0,
        stream_poll_interval=0.01,
        max_subscriptions_per_connection=2,
        max_subscriptions_per_tenant=3,
        max_ws_connections=50,
        max_ws_connections_per_tenant=20,
        limits=replace(Limits(), tenant_refill=0.001),
    ).resolved()
    with served(settings, EmbeddedStore(TABLE, path=data / "keygraph.db")) as running:
        yield running


def message(kind: str, settings: Settings, action: Action) -> bytes:
    """The bytes of one action."""
    if kind == "init":
        which = action[1]
        if which == "none":
            return text({"type": "connection_init"})
        if which == "garbage":
            return text({"type": "connection_init", "payload": bearer("x.y.z")})
        tenant = "globex" if which == "other-tenant" else "acme"
        roles = ["admin"] if which == "admin" else ["member"]
        ttl = 1 if which == "expiring" else 3600
        token = issue_token(settings, tenant, "u1", ttl_seconds=ttl, roles=roles)
        return text({"type": "connection_init", "payload": bearer(token)})
    if kind == "subscribe":
        query, variables = QUERIES[action[2]]
        payload = {"query": query, "variables": variables}
        return text({"id": action[1], "type": "subscribe", "payload": payload})
    if kind == "fragmented":
        query, variables = QUERIES[action[2]]
        payload = {"query": query, "variables": variables}
        return fragmented({"id": action[1], "type": "subscribe", "payload": payload}, action[3])
    if kind == "complete":
        return text({"id": action[1], "type": "complete"})
    if kind in ("ping", "pong"):
        return text({"type": kind})
    if kind == "binary":
        return frame(BINARY, b'{"type":"ping"}')
    if kind == "compressed":
        return deflated(4096)
    if kind == "control":  # a ping frame of the WebSocket itself, allowed anywhere
        return frame(PING, b"hi")
    return frame(0x1, action[1])


def play(app: Served, actions: list[tuple[Action, bool]], end: str) -> None:
    settings = app.settings
    ws = RawSocket(app.port)
    try:
        pending: list[bytes] = []
        for action, flush in actions:
            pending.append(message(action[0], settings, action))
            if flush:
                ws.send(*pending)
                pending.clear()
        if pending:
            ws.send(*pending)
        if end == "close":
            ws.send(close())
        if end in ("close", "wait"):  # a slow reader reads everything only now
            ws.close_code()
    except OSError:  # the server closed first: the end of the sequence
        pass
    finally:
        ws.end()


def held(app: Served) -> dict[str, Any]:
    realtime = realtime_of(app.app)
    connections = realtime.connections
    return {
        "open": connections.open,
        "awaiting init": connections.awaiting_init,
        "acme's connections": connections.held_by("acme"),
        "globex's connections": connections.held_by("globex"),
        "subscriptions": realtime.limits.held(),
        "feeds": realtime.hub.open_feeds,
    }


def test_any_sequence_of_frames_gives_every_place_back(
    app: Served, caplog: pytest.LogCaptureFixture
) -> None:
    start = held(app)
    assert start["open"] == 0
    budget = realtime_of(app.app).budget
    for tenant in ("acme", "globex"):  # below capacity, so a point given twice would show
        budget.take(tenant, budget.capacity / 2)
    points = {tenant: budget.remaining(tenant) for tenant in ("acme", "globex")}
    caplog.set_level(logging.WARNING)
    sequences = generate(SEQUENCES, HUNT or CI_SEQUENCES)
    assert sequences
    for actions, end in sequences:
        play(app, actions, end)
        wait_for(lambda: held(app) == start, f"places given back after {actions} {end}")
        for tenant, had in points.items():
            now = budget.remaining(tenant)
            assert now <= had + 1, f"{tenant} gained {now - had} points from {actions}"
            points[tenant] = now
    bugs = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert bugs == []

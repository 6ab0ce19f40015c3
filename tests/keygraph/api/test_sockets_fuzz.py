"""`keygraph serve`'s WebSocket fuzzed with raw frames over real sockets (the social case,
served by uvicorn as the command serves it): init with good, foreign and broken tokens,
subscribe and complete in any order with reused ids, pings, garbage, binary, fragmented and
compressed frames, several messages in one TCP write, and an end by close frame, by dropping
the socket, or by the server. After each sequence, once the connection is gone, every
tenant's places and the hub's feeds are back where they started; a compressed frame is
never inflated. CI plays a fixed set; KEYGRAPH_FUZZ_EXAMPLES=N plays N random sequences."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from hypothesis import strategies as st

from keygraph.serve import create_app
from keygraph.serve.package import served
from keygraph.serve.sockets import uvicorn_config
from keygraph.stores.dynamodb.local import free_port
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.tokens import issue
from tests.keygraph.api.conftest import CASES, Compiled
from tests.keygraph.api.raw_frames import (
    BINARY,
    PING,
    RawSocket,
    close,
    deflated,
    fragmented,
    frame,
    text,
)
from tests.server.fuzz.target import HUNT, generate
from tests.waiting import answering, wait_for

SPEC = CASES / "social" / "spec.toml"
SECRET = "sockets-fuzz-secret-" + "s" * 32
CI_SEQUENCES = 40
IDS = ("a", "b", "c")
QUERIES = {
    "member": ('subscription { memberChanged(memberId: "m1") { kind } }', {}),
    "resume": (
        'subscription($a: String) { memberChanged(memberId: "m1", after: $a) { kind } }',
        {"a": "not-a-cursor"},
    ),
    "query": ('{ getMember(memberId: "m1") { handle } }', {}),
    "invalid": ("subscription { nope }", {}),
    "bad-variables": (
        "subscription($id: ID!) { memberChanged(memberId: $id) { kind } }",
        {"id": 5},
    ),
}
TOKENS = ("member", "visitor", "other-tenant", "garbage", "none")
ENDS = ("close", "drop", "wait")
Action = tuple[Any, ...]
ACTIONS: st.SearchStrategy[Action] = st.one_of(
    st.tuples(st.just("subscribe"), st.sampled_from(IDS), st.sampled_from(sorted(QUERIES))),
    st.tuples(st.just("complete"), st.sampled_from(IDS)),
    st.tuples(st.sampled_from(["ping", "pong", "control", "binary", "compressed"])),
    st.tuples(st.just("init"), st.sampled_from(TOKENS)),
    st.tuples(
        st.just("fragmented"),
        st.sampled_from(IDS),
        st.sampled_from(sorted(QUERIES)),
        st.integers(2, 5),
    ),
    st.tuples(st.just("garbage"), st.binary(max_size=12)),
)
SEQUENCES = st.tuples(
    st.lists(st.tuples(ACTIONS, st.booleans()), min_size=1, max_size=12),
    st.sampled_from(ENDS),
).map(lambda drawn: ([((("init", "member")), True), *drawn[0]], drawn[1]))
"""An init first (most sequences get past it), then actions, each with whether the write
is flushed after it, and how the connection ends."""


class Running:
    """The app served by uvicorn in a thread, and the counters a test reads."""

    def __init__(self, app: Any, port: int) -> None:
        self.app = app
        self.port = port

    def held(self) -> dict[str, Any]:
        realtime = self.app.state.served.realtime
        return {"places": dict(self.app.state.places.held), "feeds": realtime.hub.open_feeds}


@pytest.fixture
def running(compiled: Callable[[Path], Compiled], tmp_path: Path) -> Iterator[Running]:
    package = compiled(SPEC)
    store = EmbeddedStore(package.table, path=tmp_path / "social.sqlite3")
    app_served = replace(served(package.package.__name__, store, SECRET), max_subscriptions=2)
    app = create_app(app_served)
    app.state.served = app_served
    port = free_port()
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port))
    thread = threading.Thread(target=server.run, name="served-app", daemon=True)
    thread.start()
    try:
        answering(f"http://127.0.0.1:{port}/healthz", thread.is_alive)
        yield Running(app, port)
    finally:
        server.should_exit = True
        thread.join(30)
        asyncio.run(store.close())


def message(action: Action) -> bytes:
    kind = action[0]
    if kind == "init":
        which = action[1]
        if which == "none":
            return text({"type": "connection_init"})
        if which == "garbage":
            return text({"type": "connection_init", "payload": {"authorization": "Bearer x"}})
        tenant = "globex" if which == "other-tenant" else "acme"
        token = issue(SECRET, tenant, "m1", roles=[which if which == "visitor" else "member"])
        return text({"type": "connection_init", "payload": {"authorization": f"Bearer {token}"}})
    if kind in ("subscribe", "fragmented"):
        query, variables = QUERIES[action[2]]
        body = {
            "id": action[1],
            "type": "subscribe",
            "payload": {"query": query, "variables": variables},
        }
        return text(body) if kind == "subscribe" else fragmented(body, action[3])
    if kind == "complete":
        return text({"id": action[1], "type": "complete"})
    if kind in ("ping", "pong"):
        return text({"type": kind})
    if kind == "binary":
        return frame(BINARY, b'{"type":"ping"}')
    if kind == "compressed":
        return deflated(4096)
    if kind == "control":
        return frame(PING, b"hi")
    return frame(0x1, action[1])


def play(running: Running, actions: list[tuple[Action, bool]], end: str) -> None:
    ws = RawSocket(running.port)
    try:
        pending: list[bytes] = []
        for action, flush in actions:
            pending.append(message(action))
            if flush:
                ws.send(*pending)
                pending.clear()
        if pending:
            ws.send(*pending)
        if end == "close":
            ws.send(close())
        if end in ("close", "wait"):
            ws.close_code()
    except OSError:  # the server closed first: the end of the sequence
        pass
    finally:
        ws.end()


def test_any_sequence_of_frames_gives_every_place_back(running: Running) -> None:
    start = running.held()
    assert start == {"places": {}, "feeds": 0}
    sequences = generate(SEQUENCES, HUNT or CI_SEQUENCES)
    assert sequences
    for actions, end in sequences:
        play(running, actions, end)
        done: Callable[[], bool] = lambda: running.held() == start  # noqa: E731
        wait_for(done, f"places given back after {actions} {end}")

"""What one WebSocket caller can make a worker hold or do, measured over real sockets: places
given back however a subscription ends (a `complete` in the same write as its `subscribe`),
no compressed frame inflated (permessage-deflate is never negotiated), and a tenant's share
of a worker's connections."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from generated.table import TABLE
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.settings import Settings
from tests.server.conftest import SECRET
from tests.server.realtime.conftest import bearer, realtime_of
from tests.server.realtime.frames import (
    RawSocket,
    Served,
    close,
    deflated,
    served,
    text,
)
from tests.server.serving.test_serve import Server
from tests.waiting import wait_for

USER = "subscription($id: ID!) { userChanged(id: $id) { change user { name } } }"
USER_ID = "VXNlcjp1MQ"  # a user's global id; the user need not exist to subscribe


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path,
        jwt_secret=SECRET,
        stream_poll_interval=0.01,
        max_subscriptions_per_tenant=50,
        max_ws_connections=12,
        max_ws_connections_per_tenant=4,
    ).resolved()


@pytest.fixture
def app(settings: Settings, tmp_path: Path) -> Iterator[Served]:
    store = EmbeddedStore(TABLE, path=tmp_path / "keygraph.db")
    with served(settings, store) as running:
        yield running


def token(settings: Settings, tenant: str, role: str = "member") -> str:
    return issue_token(settings, tenant, "u1", roles=[role])


def subscribe(op_id: str) -> bytes:
    return text(
        {"id": op_id, "type": "subscribe", "payload": {"query": USER, "variables": {"id": USER_ID}}}
    )


def complete(op_id: str) -> bytes:
    return text({"id": op_id, "type": "complete"})


def test_a_complete_in_the_same_write_as_its_subscribe_gives_the_place_back(
    app: Served, settings: Settings
) -> None:
    realtime = realtime_of(app.app)
    ws = app.raw()
    ws.send(text({"type": "connection_init", "payload": bearer(token(settings, "acme"))}))
    assert ws.message() == {"type": "connection_ack"}
    for round_ in range(12):  # 60 in all, more than the tenant's 50 places
        pairs = [(subscribe(f"s{round_}.{n}"), complete(f"s{round_}.{n}")) for n in range(5)]
        ws.send(*(part for pair in pairs for part in pair), text({"type": "ping"}))
        while (message := ws.message())["type"] != "pong":
            assert message["type"] != "error", message  # no SUBSCRIPTION_LIMIT
    wait_for(lambda: realtime.limits.held() == (0, {}), "every place given back")
    ws.send(subscribe("last"))  # a place is still there to take
    wait_for(lambda: realtime.limits.held() == (1, {"acme": 1}), "the last one running")
    ws.send(close())
    assert ws.close_code() == 1000
    wait_for(lambda: realtime.limits.held() == (0, {}), "the place given back at close")
    wait_for(lambda: realtime.connections.open == 0, "the connection counted down")


def test_one_tenant_holds_at_most_its_share_of_a_worker(app: Served, settings: Settings) -> None:
    connections = realtime_of(app.app).connections
    held = []
    for _ in range(4):
        ws = app.raw()
        ws.send(text({"type": "connection_init", "payload": bearer(token(settings, "acme"))}))
        assert ws.message() == {"type": "connection_ack"}
        held.append(ws)
    over = app.raw()
    over.send(text({"type": "connection_init", "payload": bearer(token(settings, "acme"))}))
    assert over.close_code() == 1013
    other = app.raw()  # another tenant still gets in
    other.send(text({"type": "connection_init", "payload": bearer(token(settings, "globex"))}))
    assert other.message() == {"type": "connection_ack"}
    assert (connections.held_by("acme"), connections.held_by("globex")) == (4, 1)
    held[0].end()  # an abrupt end frees the place
    wait_for(lambda: connections.held_by("acme") == 3, "acme's place freed")
    again = app.raw()
    again.send(text({"type": "connection_init", "payload": bearer(token(settings, "acme"))}))
    assert again.message() == {"type": "connection_ack"}
    for ws in [*held[1:], other, again]:
        ws.end()
    wait_for(lambda: connections.open == 0, "every connection counted down")
    assert (connections.held_by("acme"), connections.held_by("globex")) == (0, 0)


def peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmHWM:\s+(\d+) kB", status)
    assert found is not None
    return int(found.group(1))


def test_a_deflate_bomb_is_never_inflated(tmp_path: Path) -> None:
    server = Server(tmp_path / "data")
    try:
        server.wait_healthy()
        port = int(server.url.rsplit(":", 1)[1])
        before = peak_rss_kib(server.process.pid)
        ws = RawSocket(port, deflate=True)
        try:
            assert "permessage-deflate" not in ws.head.lower()  # never negotiated
            ws.send(deflated(128 * 1024 * 1024))  # about 128 KiB on the wire, no token needed
            assert ws.close_code() in (None, 1002)  # ended: a compressed frame none agreed on
        finally:
            ws.end()
        server.wait_healthy(30)
        grown = peak_rss_kib(server.process.pid) - before
        assert grown < 32 * 1024, f"the server's peak memory grew {grown} KiB"
    finally:
        server.stop()

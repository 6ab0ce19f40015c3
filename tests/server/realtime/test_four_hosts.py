"""Four `serve` processes, `--workers 2` each, with their own data directories over one
table (the embedded file, linked into each directory, as hosts share one DynamoDB table)
and one redis-server: subscribers on every worker of every host get every event (one worker
elected among all reads the change stream for them), and when a host is SIGKILLed the
others' subscribers go on and its own, resuming elsewhere, lose no event; and one tenant's
requests spread over the hosts are held to its one budget."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, aconnect_ws

from generated.table import TABLE
from keygraph.plan import Put
from keygraph.store import Store
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.settings import Settings, load_settings
from tests.ids import to_global_id
from tests.keygraph.test_hub import user_item
from tests.redis_server import RedisServer
from tests.server.realtime.conftest import PROTOCOL, bearer, receive, subscribe
from tests.server.realtime.test_served import STARTED
from tests.server.realtime.test_workers import MAX_CONNECTIONS
from tests.server.serving.test_serve import SECRET, Server
from tests.sockets_held import connections
from tests.waiting import until

HOSTS = 4
BUDGET = {
    "KEYGRAPH_TENANT_BUDGET": "300",
    "KEYGRAPH_TENANT_REFILL": "60",
    "KEYGRAPH_MAX_COST": "300",
}
"""A small budget: a tenant's requests on the four hosts exceed its refill many times over."""
WINDOW = 3.0
"""Seconds one tenant's requests are sent for."""
CLIENTS = 4 * HOSTS
"""Requests in flight at once."""
ALIASES = 10
SPREAD = (
    "query($id: ID!) { "
    + " ".join(f"u{n}: user(id: $id) {{ name }}" for n in range(ALIASES))
    + " }"
)
"""One user read ALIASES times: it costs ALIASES and returns as many objects (no refund)."""
TOLERANCE = 0.10
USER = """subscription($id: ID!, $after: String) {
  userChanged(id: $id, after: $after) { change cursor user { name } }
}"""
HOST_WAIT = 30.0
"""How long an event may take to come: a takeover or a reconnect to Redis runs first."""


async def rename(store: Store, *names: str) -> None:
    """Writes user U1 under each of `names` in turn, straight to the table."""
    for name in names:
        await store.put(Put(user_item(name, 1)))


class Subscriber:
    """One userChanged subscription on a host, its names and cursors as they come."""

    def __init__(self, ws: AsyncWebSocketSession, op_id: str) -> None:
        self.ws = ws
        self.op_id = op_id
        self.names: list[str] = []
        self.cursors: list[str] = []

    async def until_names(self, *names: str) -> None:
        """Reads events until `names` came in order after those before (at least once:
        a name sent again is read past)."""
        wanted = list(names)
        while wanted:
            message = await receive(self.ws, HOST_WAIT)
            assert (message["type"], message.get("id")) == ("next", self.op_id), message
            data = message["payload"]["data"]["userChanged"]
            self.names.append(data["user"]["name"])
            self.cursors.append(data["cursor"])
            if data["user"]["name"] == wanted[0]:
                wanted.pop(0)


@pytest.fixture
async def writer(tmp_path: Path) -> AsyncIterator[Store]:
    """The one table every host serves, with a user to subscribe to (the change log exists
    before any host opens it)."""
    (tmp_path / "table").mkdir()
    store = EmbeddedStore(TABLE, path=tmp_path / "table" / "keygraph.sqlite3")
    await store.put(Put(user_item("n0", 1)))
    yield store
    await store.close()


@contextlib.contextmanager
def hosts(tmp_path: Path) -> Iterator[list[Server]]:
    """HOSTS `serve` processes of `--workers 2` over the `writer`'s table, killed at the end."""
    servers: list[Server] = []
    try:
        for n in range(HOSTS):
            data = tmp_path / f"host-{n}"
            data.mkdir()
            (data / "keygraph.sqlite3").symlink_to(tmp_path / "table" / "keygraph.sqlite3")
            servers.append(Server(data, "--workers", "2", log=tmp_path / f"host-{n}.log"))
        yield servers
    finally:
        for server in servers:
            server.stop()


def workers(server: Server) -> list[int]:
    return server.children("multiprocessing.spawn")


async def subscribed(
    server: Server, client: httpx.AsyncClient, stack: contextlib.AsyncExitStack, after: str | None
) -> Subscriber:
    """A userChanged subscription on `server` (after the cursor `after`, if any)."""
    ws: AsyncWebSocketSession = await stack.enter_async_context(
        aconnect_ws(
            f"{server.url}/graphql",
            client,
            subprotocols=[PROTOCOL],
            keepalive_ping_interval_seconds=None,
        )
    )
    await ws.send_json({"type": "connection_init", "payload": bearer(server.token)})
    assert (await receive(ws, 30))["type"] == "connection_ack"
    variables: dict[str, Any] = {"id": to_global_id("User", "U1")}
    if after is not None:
        variables["after"] = after
    await subscribe(ws, "1", USER, variables)
    return Subscriber(ws, "1")


async def on_every_worker(
    server: Server, client: httpx.AsyncClient, stack: contextlib.AsyncExitStack
) -> list[Subscriber]:
    """Subscribers on `server` until each of its workers holds one, started."""
    pids = workers(server)
    assert len(pids) == 2
    found: list[Subscriber] = []
    while len(found) < MAX_CONNECTIONS and not all(connections(p, server.port) for p in pids):
        found.append(await subscribed(server, client, stack, None))
    assert all(connections(p, server.port) for p in pids)
    await until(lambda: server.logged(STARTED) >= len(found), "the subscriptions to start")
    return found


async def test_every_host_delivers_and_a_host_killed_loses_nothing(
    tmp_path: Path,
    writer: Store,
    redis_server: RedisServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEYGRAPH_REDIS_URL", redis_server.url)
    with hosts(tmp_path) as servers:
        await asyncio.gather(*(asyncio.to_thread(server.wait_healthy) for server in servers))
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(httpx.AsyncClient())
            subscribers: dict[Server, list[Subscriber]] = {}
            for server in servers:
                subscribers[server] = await on_every_worker(server, client, stack)
            everyone = [s for found in subscribers.values() for s in found]
            await rename(writer, "n1", "n2", "n3")
            await asyncio.gather(*(s.until_names("n1", "n2", "n3") for s in everyone))

            host = servers[0]
            await rename(writer, "n4")  # mid-stream: sent by the killed host, or not yet
            for pid in [*workers(host), host.process.pid]:
                os.kill(pid, signal.SIGKILL)
            host.process.wait(timeout=30)
            await rename(writer, "n5", "n6")
            survivors = [server for server in servers if server is not host]
            live = [s for server in survivors for s in subscribers[server]]
            await asyncio.gather(*(s.until_names("n4", "n5", "n6") for s in live))
            resumed = [
                await subscribed(survivors[n % len(survivors)], client, stack, s.cursors[-1])
                for n, s in enumerate(subscribers[host])
            ]
            await asyncio.gather(*(s.until_names("n4", "n5", "n6") for s in resumed))
            assert not any({"n1", "n2", "n3"} & set(s.names) for s in resumed)


class Spread:
    """One tenant's requests sent round-robin to the hosts, and what their budget admitted."""

    def __init__(self, servers: list[Server], client: httpx.AsyncClient, token: str) -> None:
        self.servers = servers
        self.client = client
        self.headers = bearer(token)
        self.sent = 0
        self.admitted = 0
        self.refused = 0
        self.cost = 0
        """Points the admitted requests kept: requested, less what went back unused."""

    async def one(self) -> None:
        server = self.servers[self.sent % len(self.servers)]
        self.sent += 1
        variables = {"id": to_global_id("User", "U1")}
        response = await self.client.post(
            f"{server.url}/graphql",
            json={"query": SPREAD, "variables": variables},
            headers=self.headers,
            timeout=30,
        )
        body = response.json()
        if response.status_code == 429:
            assert body["errors"][0]["extensions"]["code"] == "THROTTLED", body
            self.refused += 1
            return
        assert response.status_code == 200, body
        assert "errors" not in body, body
        cost = body["extensions"]["cost"]
        requested, objects = cost["requested"], cost["actual"]["objects"]
        self.admitted += 1
        self.cost += requested - max(0, requested - objects)

    async def until(self, end: float) -> None:
        while time.monotonic() < end:
            await self.one()


async def test_one_tenant_spread_over_the_hosts_is_held_to_its_budget(
    tmp_path: Path,
    writer: Store,
    redis_server: RedisServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEYGRAPH_REDIS_URL", redis_server.url)
    for name, value in BUDGET.items():
        monkeypatch.setenv(name, value)
    limits = load_settings(jwt_secret=SECRET).limits
    with hosts(tmp_path) as servers:
        await asyncio.gather(*(asyncio.to_thread(server.wait_healthy) for server in servers))
        pool = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=CLIENTS)
        async with httpx.AsyncClient(limits=pool) as client:
            # another tenant opens the pooled connections and warms the hosts up
            settings = Settings(data_dir=tmp_path / "host-0", jwt_secret=SECRET)
            other = issue_token(settings, "warm", roles=["admin"])
            warm = Spread(servers, client, other)
            await asyncio.gather(*(warm.one() for _ in range(CLIENTS)))
            assert warm.admitted == CLIENTS

            spread = Spread(servers, client, servers[0].token)
            start = time.monotonic()
            await asyncio.gather(*(spread.until(start + WINDOW) for _ in range(CLIENTS)))
            elapsed = time.monotonic() - start
    fell_back = [s.log for s in servers if s.log and "redis cannot be reached" in s.log.read_text()]
    assert not fell_back, f"hosts counted on their own budget: {fell_back}"
    expected = limits.tenant_budget + limits.tenant_refill * elapsed
    report = (
        f"{spread.cost} points admitted against {expected:.0f} (capacity "
        f"{limits.tenant_budget} + {limits.tenant_refill}/s over {elapsed:.2f} s); "
        f"{spread.admitted} requests admitted, {spread.refused} refused"
    )
    assert spread.refused > 0, report
    assert abs(spread.cost - expected) <= TOLERANCE * expected, report

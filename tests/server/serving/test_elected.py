"""Hosts sharing one table and one Redis (KEYGRAPH_REDIS_URL), each the compiled API as
`serve` builds it (server/compiled.py) over its own store of one embedded table: one of
them holds the reader's lease and reads the change stream for all, a subscriber on every
host gets every event, and when the reader stops another host takes over within the
lease and a resuming subscriber loses nothing, replayed from Redis; nor does one once Redis
restarted. Under `serve --workers N` with Redis, one worker reads the stream and no relay
runs."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport
from starlette.applications import Starlette

from generated.models.user import User
from generated.table import TABLE
from keygraph.plan import Put
from keygraph.realtime.hub import Hub
from keygraph.serve import create_app
from keygraph.serve.elected import Elected
from keygraph.serve.metrics import RESUMES_BY
from keygraph.store import Store
from keygraph.stores import stream_of
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.streams import Batch, ChangeStream, Partitions, Position, Shard, Waking
from server.auth.tokens import issue_token
from server.compiled import compiled
from server.serving.serve import RELAY_SOCKET
from server.settings import Settings
from tests.ids import to_global_id
from tests.redis_server import RedisServer
from tests.server.conftest import SECRET
from tests.server.serving.test_serve import Server
from tests.waiting import until, wait_for

USER = """subscription($id: ID!, $after: String) {
  userChanged(id: $id, after: $after) { change cursor user { name } }
}"""
LEASE = 2.0
"""Seconds the reader's lease lasts unrenewed: a stopped reader's successor takes over
within it."""
WAIT = 30.0
"""Seconds an event may take to come on a loaded machine."""


class Counted:
    """A change stream that counts its reads that follow it (those of no resume)."""

    def __init__(self, stream: ChangeStream) -> None:
        self.stream = stream
        self.follows = 0

    async def shards(self) -> list[Shard]:
        return await self.stream.shards()

    async def read(
        self, position: Position, limit: int = 1000, *, within: Partitions | None = None
    ) -> Batch:
        if within is None:
            self.follows += 1
        return await self.stream.read(position, limit, within=within)

    async def wait_for_writes(self, seconds: float) -> None:
        assert isinstance(self.stream, Waking)
        await self.stream.wait_for_writes(seconds)

    async def close(self) -> None:
        close: Callable[[], Awaitable[None]] | None = getattr(self.stream, "close", None)
        if close is not None:
            await close()


@dataclass
class Host:
    """One host's app, its counted change stream, its hub and its part in the election."""

    app: Starlette
    stream: Counted
    hub: Hub
    elected: Elected
    stack: contextlib.AsyncExitStack

    @property
    def leads(self) -> bool:
        return self.elected.lease.held


Start = Callable[[str], Awaitable[Host]]


@pytest.fixture
async def hosts(redis_server: RedisServer, tmp_path: Path) -> AsyncIterator[Start]:
    """Starts a host by name; those still running stop at the end."""
    running: list[Host] = []

    async def start(name: str) -> Host:
        settings = Settings(
            data_dir=tmp_path / name,
            jwt_secret=SECRET,
            redis_url=redis_server.url,
            reader_lease=LEASE,
            stream_poll_interval=0.01,
        ).resolved()
        stack = contextlib.AsyncExitStack()
        store = EmbeddedStore(TABLE, path=tmp_path / "table.sqlite3")
        stack.push_async_callback(store.close)
        stream = Counted(stream_of(store))
        served = compiled(settings, store, stream)
        assert served.realtime is not None
        hub = served.realtime.hub
        elected = getattr(hub.source, "elected", None)
        assert isinstance(elected, Elected), "with Redis, the hub reads the Redis Stream"
        app = create_app(served)
        await stack.enter_async_context(app.router.lifespan_context(app))
        host = Host(app, stream, hub, elected, stack)
        running.append(host)
        return host

    yield start
    for host in running:
        await host.stack.aclose()


@pytest.fixture
async def writer(tmp_path: Path) -> AsyncIterator[Store]:
    store = EmbeddedStore(TABLE, path=tmp_path / "table.sqlite3")
    yield store
    await store.close()


async def rename(store: Store, *names: str) -> None:
    for version, name in enumerate(names, 1):
        user = User(
            user_id="U1",
            email="u@acme.test",
            name=name,
            created_at="2026-01-01T00:00:00Z",
            version=version,
        )
        await store.put(Put(user.to_item("acme")))


def token(n: int) -> str:
    """An admin's token: each subscriber its own caller, so none shares another's feed."""
    settings = Settings(jwt_secret=SECRET)
    return issue_token(settings, "acme", f"admin-{n}", roles=["admin"])


@dataclass
class Subscriber:
    """The names and cursors a subscription got, in order."""

    names: list[str]
    cursors: list[str]


async def _next(ws: AsyncWebSocketSession) -> dict[str, Any]:
    message: dict[str, Any] = await ws.receive_json(timeout=WAIT)
    assert (message["type"], message.get("id")) == ("next", "1"), message
    data: dict[str, Any] = message["payload"]["data"]["userChanged"]
    return data


async def receiving(
    host: Host, n: int, names: tuple[str, ...], ready: asyncio.Event, after: str | None = None
) -> Subscriber:
    """Subscribes on `host` (then sets `ready`, once its feed is open when it follows: no
    other may open or close meanwhile) and reads events until `names` came in order; in a
    task of its own, as each host's WebSocket transport must be."""
    got = Subscriber([], [])
    before = host.hub.open_feeds
    variables: dict[str, Any] = {"id": to_global_id("User", "U1")}
    if after is not None:
        variables["after"] = after
    async with (
        ASGIWebSocketTransport(app=host.app) as transport,
        httpx.AsyncClient(transport=transport, base_url="http://keygraph.test") as client,
        contextlib.AsyncExitStack() as stack,
    ):
        ws: AsyncWebSocketSession = await stack.enter_async_context(
            aconnect_ws(
                "http://keygraph.test/graphql",
                client,
                subprotocols=["graphql-transport-ws"],
                keepalive_ping_interval_seconds=None,
            )
        )
        init = {"Authorization": f"Bearer {token(n)}"}
        await ws.send_json({"type": "connection_init", "payload": init})
        assert await ws.receive_json(timeout=WAIT) == {"type": "connection_ack"}
        payload = {"query": USER, "variables": variables}
        await ws.send_json({"type": "subscribe", "id": "1", "payload": payload})
        if after is None:
            await until(lambda: host.hub.open_feeds > before, "the subscription's feed")
        ready.set()
        wanted = list(names)
        while wanted:
            data = await _next(ws)
            got.names.append(data["user"]["name"])
            got.cursors.append(data["cursor"])
            if data["user"]["name"] == wanted[0]:
                wanted.pop(0)
    return got


async def subscribed(
    host: Host, n: int, names: tuple[str, ...], after: str | None = None
) -> asyncio.Task[Subscriber]:
    """A task receiving `names` on `host`, returned once its subscription is open."""
    ready = asyncio.Event()
    task = asyncio.create_task(receiving(host, n, names, ready, after))
    done, _ = await asyncio.wait(
        [task, asyncio.create_task(ready.wait())], return_when=asyncio.FIRST_COMPLETED
    )
    if task in done:
        task.result()  # raises what kept it from subscribing
    return task


def from_redis() -> float:
    value: float = RESUMES_BY("redis")._value.get()
    return value


async def test_one_host_reads_the_stream_for_all_and_another_takes_over(
    hosts: Start, writer: Store, redis_server: RedisServer
) -> None:
    first = await hosts("a")
    await until(lambda: first.leads, "the only contender to take the lease")
    second = await hosts("b")
    names = ("n1", "n2", "n3")
    tasks = [await subscribed(host, n, names) for n, host in enumerate((first, second))]
    await rename(writer, *names)
    on_first, on_second = await asyncio.gather(*tasks)
    assert on_first.names[-3:] == on_second.names[-3:] == list(names)
    assert first.stream.follows > 0
    assert second.stream.follows == 0, "a host that does not lead reads Redis alone"
    assert not second.leads
    assert second.elected.reader is not None
    assert second.elected.reader.takes == 0

    await until(lambda: second.hub.open_feeds == 0, "the first subscriber's feed to close")
    live = await subscribed(second, 2, ("n4", "n5"))
    stopped = time.monotonic()
    await first.stack.aclose()  # the reader releases the lease; the other host takes it
    await until(lambda: second.leads, "the other host to take the lease")
    assert time.monotonic() - stopped < LEASE
    await rename(writer, "n4", "n5")
    resumed_before = from_redis()
    resumed = await (await subscribed(second, 3, ("n4", "n5"), on_first.cursors[-1]))
    assert resumed.names == ["n4", "n5"], "a resume gets what came after its cursor, once"
    assert from_redis() > resumed_before, "the resume read Redis, not the change stream"
    assert (await live).names == ["n4", "n5"]
    assert second.stream.follows > 0

    redis_server.kill()  # the reader keeps its place until Redis is back
    await rename(writer, "n6")
    redis_server.start()
    await rename(writer, "n7")
    again = await (await subscribed(second, 4, ("n6", "n7"), resumed.cursors[-1]))
    assert again.names == ["n6", "n7"]


def test_serve_with_workers_and_redis_elects_one_reader_and_runs_no_relay(
    tmp_path: Path, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEYGRAPH_REDIS_URL", redis_server.url)
    data = tmp_path / "data"
    server = Server(data, "--workers", "2", log=tmp_path / "serve.log")
    try:
        server.wait_healthy()
        leading = "reading the change stream for every host (term 1)"
        wait_for(lambda: server.logged(leading) == 1, "a worker to take the reader's lease", 60)
        assert not (data / RELAY_SOCKET).exists()
        assert server.logged("reading the change stream for every host (term 2)") == 0
    finally:
        server.stop()

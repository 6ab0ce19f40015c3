"""Hosts sharing one table and one Redis (KEYGRAPH_REDIS_URL): apps with their own store
and data directory over one embedded table. One elected reader appends the change stream
to Redis and every host's hub reads it: subscribers on every host get every event; when
the reading host stops, another takes over and a resuming subscriber loses nothing; with
Redis restarted, hubs read again and resuming subscribers lose nothing."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from httpx_ws import AsyncWebSocketSession

from generated.table import TABLE
from keygraph.plan import Get, Put
from keygraph.store import Store
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.edge.app import App, create_app
from server.graphql.ids import to_global_id
from server.observability.metrics import RESUMES_BY
from server.realtime.elected import LEASE_PARTITION
from server.settings import Settings
from tests.redis_server import RedisServer
from tests.server.realtime.conftest import realtime_of, receive, sessions, subscribe
from tests.server.realtime.test_hub import user_item
from tests.waiting import POLL, UNTIL_SECONDS, until

USER = """subscription($id: ID!, $after: String) {
  userChanged(id: $id, after: $after) { change cursor user { name } }
}"""
LEASE_KEY = {TABLE.partition_key: LEASE_PARTITION, TABLE.sort_key: "keygraph"}
HOST_WAIT = 30.0
"""How long an event may take to come: a takeover or a reconnect to Redis runs first."""
Start = Callable[[str], Awaitable[App]]


@pytest.fixture
async def hosts(
    settings: Settings, redis_server: RedisServer, tmp_path: Path
) -> AsyncIterator[tuple[Start, Callable[[App], Awaitable[None]]]]:
    """Starts a host by name (an app over its own store of the shared table), and stops
    one; those still running stop at the end."""
    running: dict[int, contextlib.AsyncExitStack] = {}

    async def start(name: str) -> App:
        own = replace(
            settings, data_dir=tmp_path / name, redis_url=redis_server.url, reader_lease=0.5
        )
        app = create_app(
            own, EmbeddedStore(TABLE, path=tmp_path / "table.sqlite3"), close_store=True
        )
        stack = running[id(app)] = contextlib.AsyncExitStack()
        await stack.enter_async_context(app.router.lifespan_context(app))
        return app

    async def stop(app: App) -> None:
        await running.pop(id(app)).aclose()

    yield start, stop
    for stack in running.values():
        await stack.aclose()


@pytest.fixture
async def writer(tmp_path: Path) -> AsyncIterator[Store]:
    store = EmbeddedStore(TABLE, path=tmp_path / "table.sqlite3")
    yield store
    await store.close()


async def rename(store: Store, *names: str) -> None:
    for name in names:
        await store.put(Put(user_item(name, 1)))


async def led(store: Store) -> None:
    """Returns once a reader holds the lease and has checkpointed where it starts."""
    deadline = time.monotonic() + UNTIL_SECONDS
    while True:
        lease = await store.get(Get(LEASE_KEY, consistent=True))
        if lease is not None and "state" in lease and not lease.get("released"):
            return
        assert time.monotonic() < deadline, "timed out waiting for a reader to lead"
        await asyncio.sleep(POLL)


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


@contextlib.asynccontextmanager
async def subscribed(app: App, token: str, after: str | None = None) -> AsyncIterator[Subscriber]:
    hub = realtime_of(app).hub
    before = hub.open_feeds
    async with sessions(app)() as open_session:
        ws = await open_session(token)
        variables: dict[str, Any] = {"id": to_global_id("User", "U1")}
        if after is not None:
            variables["after"] = after
        await subscribe(ws, "1", USER, variables)
        await until(lambda: hub.open_feeds > before, "the subscription's feed")
        yield Subscriber(ws, "1")


def from_redis() -> float:
    value: float = RESUMES_BY("redis")._value.get()
    return value


async def receiving(
    app: App, token: str, names: tuple[str, ...], ready: asyncio.Event, after: str | None = None
) -> Subscriber:
    """Subscribes on `app` (then sets `ready`) and reads until `names` came; in a task of
    its own, as each host's WebSocket transport must be."""
    async with subscribed(app, token, after) as subscriber:
        ready.set()
        await subscriber.until_names(*names)
        return subscriber


def token(settings: Settings, n: int) -> str:
    """An admin's token: each subscriber's own caller, so none shares another's feed."""
    return issue_token(settings, "acme", f"admin-{n}", roles=["admin"])


async def test_every_host_delivers_and_a_reader_stopping_loses_nothing(
    hosts: tuple[Start, Callable[[App], Awaitable[None]]],
    writer: Store,
    settings: Settings,
    redis_server: RedisServer,
) -> None:
    start, stop = hosts
    first = await start("a")  # leads: it is the only contender
    await led(writer)
    apps = [first, await start("b"), await start("c")]
    readies = [asyncio.Event() for _ in apps]
    names = ("n1", "n2", "n3")
    tasks = [
        asyncio.create_task(receiving(app, token(settings, n), names, ready))
        for n, (app, ready) in enumerate(zip(apps, readies, strict=True))
    ]
    for ready in readies:
        await ready.wait()
    await rename(writer, *names)
    on_a, _, _ = await asyncio.gather(*tasks)
    await stop(first)  # the reader stops; another host's takes over from its checkpoint
    await rename(writer, "n4", "n5")
    resumed_before = from_redis()
    resumed = await receiving(
        apps[1], token(settings, 9), ("n4", "n5"), asyncio.Event(), on_a.cursors[-1]
    )
    assert "n3" not in resumed.names
    assert from_redis() > resumed_before  # the resume read Redis, not the change stream
    redis_server.kill()
    await rename(writer, "n6")
    redis_server.start()
    await rename(writer, "n7")
    await receiving(apps[2], token(settings, 9), ("n6", "n7"), asyncio.Event(), resumed.cursors[-1])

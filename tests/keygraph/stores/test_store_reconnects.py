"""The DynamoDB store behind a fault proxy on loopback in front of DynamoDB Local: idle
connections the endpoint closes, a close that crosses a request, and answers cut short.
Reads and writes safe to repeat succeed (a transaction applied once); a write that may have
run and is not safe to repeat is reported unavailable, never applied twice."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import urlsplit

import pytest

from keygraph.errors import StoreUnavailable
from keygraph.plan import Condition, Get, Put, Update
from keygraph.stores.dynamodb.connections import Connections
from keygraph.stores.dynamodb.local import LOCAL_REGION
from keygraph.stores.dynamodb.retry import RetryPolicy
from keygraph.stores.dynamodb.store import DynamoDBStore
from keygraph.stores.dynamodb.transport import Transport
from tests.waiting import until

pytestmark = pytest.mark.dynamodb_local

FAST = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.004)
COUNTER = {"PK": "c", "SK": "n"}
CREATE = Put({"PK": "u", "SK": "1", "name": "Ada"}, (Condition("not_exists", "PK"),))


class FaultProxy:
    """Forwards loopback connections to DynamoDB Local, one upstream connection each, and
    misbehaves as set: `idle_close` closes a connection idle that long, as endpoints do;
    `stale_after` drops a request arriving on a connection idle that long, unanswered and
    unsent, as when the endpoint's close crosses it; `cut_next` answers are cut in half
    (DynamoDB has run their calls)."""

    def __init__(
        self, upstream: str, *, idle_close: float | None = None, stale_after: float | None = None
    ) -> None:
        parts = urlsplit(upstream)
        assert parts.hostname in ("127.0.0.1", "localhost")
        assert parts.port is not None
        self.upstream = (parts.hostname, parts.port)
        self.idle_close, self.stale_after = idle_close, stale_after
        self.cut_next = 0
        self.connections = self.dropped = self.cut = 0
        self.last_byte = 0.0
        """When a byte last passed, either way, on any connection (the loop's clock)."""
        self._handlers: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    def all_stale(self) -> bool:
        """Whether every connection has been idle for `stale_after`: a request on any of
        them is dropped."""
        assert self.stale_after is not None
        return asyncio.get_running_loop().time() - self.last_byte >= self.stale_after

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for handler in self._handlers:
            handler.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self.connections += 1
        loop = asyncio.get_running_loop()
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        last = loop.time()

        async def requests() -> None:
            nonlocal last
            while data := await reader.read(65536):
                if self.stale_after is not None and loop.time() - last >= self.stale_after:
                    self.dropped += 1
                    return
                last = self.last_byte = loop.time()
                up_writer.write(data)
                await up_writer.drain()

        async def answers() -> None:
            nonlocal last
            while data := await up_reader.read(65536):
                if self.cut_next:
                    self.cut_next -= 1
                    self.cut += 1
                    writer.write(data[: len(data) // 2])
                    await writer.drain()
                    return
                last = self.last_byte = loop.time()
                writer.write(data)
                await writer.drain()

        async def idle() -> None:
            assert self.idle_close is not None
            while True:  # until no byte has passed for idle_close seconds
                left = last + self.idle_close - loop.time()
                if left <= 0:
                    return
                await asyncio.sleep(left)

        pumps = [asyncio.create_task(requests()), asyncio.create_task(answers())]
        if self.idle_close is not None:
            pumps.append(asyncio.create_task(idle()))
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            writer.close()
            up_writer.close()
            self._handlers.discard(task)


Behind = Callable[..., Awaitable[tuple[FaultProxy, DynamoDBStore]]]
"""behind(idle_timeout=…, **proxy settings): a proxy and a store whose calls go through it."""


@pytest.fixture
async def behind(dynamodb_store: DynamoDBStore) -> AsyncIterator[Behind]:
    made: list[tuple[FaultProxy, DynamoDBStore]] = []

    async def make(
        idle_timeout: float = 30.0, **faults: float | None
    ) -> tuple[FaultProxy, DynamoDBStore]:
        direct = dynamodb_store.transport
        proxy = FaultProxy(direct.endpoint_url, **faults)
        port = await proxy.start()
        transport = Transport(
            f"http://127.0.0.1:{port}",
            LOCAL_REGION,
            direct.credentials,
            max_connections=32,
            idle_timeout=idle_timeout,
        )
        store = DynamoDBStore(dynamodb_store.table, transport=transport, retry=FAST)
        made.append((proxy, store))
        return proxy, store

    yield make
    for proxy, store in made:
        await store.close()
        store.transport.close()
        await proxy.stop()


async def busy(store: DynamoDBStore) -> None:
    """Twenty reads at once: twenty connections, idle afterwards."""
    keys = [{"PK": "w", "SK": str(i)} for i in range(20)]
    assert await asyncio.gather(*(store.get(Get(key)) for key in keys)) == [None] * 20


async def count(store: DynamoDBStore) -> int:
    item = await store.get(Get(COUNTER, consistent=True))
    assert item is not None
    return int(item["n"])


async def test_connections_expire_before_the_endpoint_drops_them(
    behind: Behind, dynamodb_store: DynamoDBStore
) -> None:
    proxy, store = await behind(idle_timeout=0.3, stale_after=0.6)
    await busy(store)
    await until(proxy.all_stale, "the endpoint to hold every connection stale")
    await store.put(CREATE)  # a conditional write: never sent twice, so it needs a live one
    assert await dynamodb_store.get(Get({"PK": "u", "SK": "1"})) == CREATE.item
    await busy(store)
    assert proxy.dropped == 0


async def test_connections_the_endpoint_closed_are_not_reused(
    behind: Behind, dynamodb_store: DynamoDBStore
) -> None:
    proxy, store = await behind(idle_timeout=30.0, idle_close=0.2)
    await busy(store)
    opened = proxy.connections
    pool = store.transport.pool
    assert isinstance(pool, Connections)
    await until(
        lambda: all(idle.reader.at_eof() for idle in pool._idle), "the endpoint's closes to arrive"
    )
    await store.put(CREATE)
    assert await dynamodb_store.get(Get({"PK": "u", "SK": "1"})) == CREATE.item
    await busy(store)
    assert proxy.connections > opened  # new connections, not the closed ones


async def test_a_close_crossing_a_request_is_retried_on_a_new_connection_when_safe(
    behind: Behind, dynamodb_store: DynamoDBStore
) -> None:
    proxy, store = await behind(idle_timeout=30.0, stale_after=0.4)
    await dynamodb_store.put(Put({**COUNTER, "n": 0}))
    await busy(store)
    await until(proxy.all_stale, "every connection to be stale")
    opened = proxy.connections
    assert await store.get(Get({"PK": "w", "SK": "1"})) is None
    assert (proxy.dropped, proxy.connections) == (1, opened + 1)
    await until(proxy.all_stale, "every connection to be stale")
    await store.transact_write([Update(COUNTER, add={"n": 1})])
    assert (proxy.dropped, await count(dynamodb_store)) == (2, 1)
    await until(proxy.all_stale, "every connection to be stale")
    with pytest.raises(StoreUnavailable, match="outcome unknown"):
        await store.put(CREATE)
    assert proxy.dropped == 3
    assert await dynamodb_store.get(Get({"PK": "u", "SK": "1"})) is None


async def test_answers_cut_short(behind: Behind, dynamodb_store: DynamoDBStore) -> None:
    proxy, store = await behind()
    await dynamodb_store.put(Put({**COUNTER, "n": 0}))
    proxy.cut_next = 1
    assert await store.get(Get(COUNTER)) == {**COUNTER, "n": 0}
    proxy.cut_next = 1
    await store.transact_write([Update(COUNTER, add={"n": 1})])
    assert await count(dynamodb_store) == 1  # run once, its repeat answered under its token
    proxy.cut_next = 1
    with pytest.raises(StoreUnavailable, match="outcome unknown"):
        await store.update(Update(COUNTER, add={"n": 1}, conditions=(Condition("exists", "PK"),)))
    assert await count(dynamodb_store) == 2  # once, not twice
    proxy.cut_next = 1
    with pytest.raises(StoreUnavailable, match="outcome unknown"):  # not "condition failed"
        await store.put(CREATE)
    assert await dynamodb_store.get(Get({"PK": "u", "SK": "1"})) == CREATE.item
    assert proxy.cut == 4

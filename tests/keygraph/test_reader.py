"""The one stream reader for every host (keygraph/realtime/reader.py), on each store and a
real redis-server: contenders for the lease in the table elect exactly one, and a holder
that stopped renewing is fenced off by the lease's version (in the table) and its term (in
Redis); the holder appends the stream to the Redis Stream, and when it is cancelled or its
process is killed another contender goes on from its checkpoint, losing nothing. A resume
reads Redis from the first record its cursor lacks, and a holder held up past its lease
releases it with its checkpoint."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from generated.table import TABLE
from keygraph.realtime.lease import Lease
from keygraph.realtime.reader import ElectedReader
from keygraph.realtime.shards import Read
from keygraph.shared.changes import ChangeLog
from keygraph.shared.link import Link
from keygraph.shared.source import RedisSource
from keygraph.store import Store
from keygraph.stores import stream_of
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.streams import Partitions, Position, Shard, StreamRecord
from tests.conftest import StoreFactory
from tests.redis_server import RedisServer
from tests.waiting import until

KEY = {"PK": "~KEYGRAPH#READER", "SK": "test"}
STREAM = "keygraph:test:changes"


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def store(kind: str, store_factory: StoreFactory) -> Store:
    return await store_factory(kind, TABLE)


@pytest.fixture
async def link(redis_server: RedisServer) -> AsyncIterator[Link]:
    made = Link(redis_server.url)
    yield made
    await made.close()


def changes(link: Link) -> ChangeLog:
    return ChangeLog(link, STREAM, 3600, 100_000, "PK")


async def test_contenders_elect_one_holder_and_a_stale_one_is_fenced_off(store: Store) -> None:
    clock = Clock()
    a, b, c = (Lease(store, KEY, 10.0, name, clock) for name in "abc")
    assert await a.take()
    assert a.held
    assert a.term == 1
    assert not await b.take()  # first sight of a's version: b waits a whole lease
    clock.now = 9.0
    assert await a.renew('{"checkpoint": 1}')
    clock.now = 15.0
    assert not await b.take()  # a renewed: a new version, seen from now
    clock.now = 25.0
    assert not a.held  # a stopped renewing (paused): its lease ran out on its own clock
    assert await b.take()
    assert b.term == 3
    assert b.state == '{"checkpoint": 1}'
    assert not await a.renew('{"checkpoint": 0}')  # fenced off by the version
    assert a.version is None
    assert not a.held
    assert not await c.take()
    assert await b.renew(release=True)  # released: every contender may take it at once
    taken = await asyncio.gather(
        *(Lease(store, KEY, 10.0, f"n{n}", clock).take() for n in range(6))
    )
    assert taken.count(True) == 1


def record(sequence: int) -> StreamRecord:
    keys = {"PK": "T#acme#U", "SK": str(sequence)}
    return StreamRecord(str(sequence), "INSERT", keys, None, keys, datetime.now(UTC))


async def test_a_stale_term_cannot_append(link: Link) -> None:
    log = changes(link)
    assert await log.append(2, [Read("s1", {"s1": None}, [record(1)])])
    assert not await log.append(1, [Read("s1", {"s1": "1"}, [record(2)])])
    assert await log.append(3, [Read("s1", {"s1": "1"}, [record(2)])])
    entries, _ = await log.after("-", 10)
    assert [entry.sequence for entry in entries] == ["1", "2"]


@pytest.mark.parametrize(
    ("after", "lacked"), [("1", [2, 3, 4, 5]), ("3", [4, 5]), ("4", [5]), ("5", [])]
)
async def test_a_resume_reads_redis_from_the_first_record_the_cursor_lacks(
    link: Link, redis_server: RedisServer, after: str, lacked: list[int]
) -> None:
    log = changes(link)
    assert await log.append(1, [Read("s1", {"s1": None}, [record(n) for n in (1, 2, 3)])])
    # a reader taking over from a checkpoint at 1 appends 2 and 3 again, in one read with 4, 5
    assert await log.append(2, [Read("s1", {"s1": "1"}, [record(n) for n in (2, 3, 4, 5)])])
    source = RedisSource(log, redis_server.url)
    try:
        replayed = await source.replay(
            [Position("s1", after)],
            [Shard("s1", None, False)],
            Partitions("PK", ("T",)),
            lambda _points: None,
        )
        assert replayed is not None  # Redis holds it all: the change stream is not read
        assert [int(record.sequence) async for _shard, record in replayed] == lacked
    finally:
        await source.close()


def write(store: Store, n: int) -> asyncio.Future[None]:
    from keygraph.plan import Put

    return asyncio.ensure_future(store.put(Put({"PK": "T#acme#U", "SK": f"{n:04}", "n": n})))


@contextlib.asynccontextmanager
async def collecting(url: str, link: Link) -> AsyncIterator[list[int]]:
    """What a hub reading the Redis Stream from now gets of the writes: their numbers."""
    source = RedisSource(changes(link), url, block=0.1)
    await source.skip()
    seen: list[int] = []

    async def collect() -> None:
        while True:
            for read in await source.read():
                seen.extend(int(r.keys["SK"]) for r in read.records if r.keys["PK"] == "T#acme#U")

    task = asyncio.create_task(collect())
    try:
        yield seen
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await source.close()


@contextlib.asynccontextmanager
async def running(*readers: ElectedReader) -> AsyncIterator[list[asyncio.Task[None]]]:
    tasks = [asyncio.create_task(reader.run()) for reader in readers]
    try:
        yield tasks
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


LEASE = {"embedded": 0.5, "dynamodb-local": 2.0}
"""Seconds of the lease: short, so that a takeover comes soon, but longer than DynamoDB
Local's slowest renewals on a busy machine."""


def reader(
    store: Store, link: Link, name: str, leaders: set[str], kind: str = "embedded"
) -> ElectedReader:
    """A contender named `name`, in `leaders` while it leads."""
    lease = Lease(store, KEY, LEASE[kind], name)
    return ElectedReader(
        stream_of(store),
        lease,
        changes(link),
        0.01,
        leading=lambda on: leaders.add(name) if on else leaders.discard(name),
    )


async def test_a_cancelled_holder_is_replaced_from_its_checkpoint(
    store: Store, link: Link, redis_server: RedisServer, kind: str
) -> None:
    leaders: set[str] = set()
    a, b, c = (reader(store, link, name, leaders, kind) for name in "abc")
    async with collecting(redis_server.url, link) as seen, running(a, b, c) as tasks:
        await until(lambda: len(leaders) == 1, "a reader to lead")
        (first,) = leaders
        await asyncio.gather(*(write(store, n) for n in range(20)))
        await until(lambda: set(seen) >= set(range(20)), "the first writes in Redis")
        tasks["abc".index(first)].cancel()  # stops mid-stream; writes go on meanwhile
        await asyncio.gather(*(write(store, n) for n in range(20, 40)))
        await until(lambda: len(leaders - {first}) == 1, "another reader to take over")
        await asyncio.gather(*(write(store, n) for n in range(40, 60)))
        await until(lambda: set(seen) >= set(range(60)), "every write in Redis")
    assert sorted(set(seen)) == list(range(60))


async def test_a_holder_held_up_past_its_lease_releases_it_with_its_checkpoint(
    store_factory: StoreFactory, link: Link, redis_server: RedisServer
) -> None:
    store = await store_factory("embedded", TABLE)
    clock = Clock()
    leaders: set[str] = set()
    lease = Lease(store, KEY, 10.0, "a", clock)
    held_up = ElectedReader(
        stream_of(store),
        lease,
        changes(link),
        0.01,
        leading=lambda on: leaders.add("a") if on else leaders.discard("a"),
    )
    async with collecting(redis_server.url, link) as seen, running(held_up):
        await until(lambda: leaders == {"a"}, "a reader to lead")
        await asyncio.gather(*(write(store, n) for n in range(5)))
        await until(lambda: set(seen) >= set(range(5)), "the writes in Redis")
        clock.now = 20.0  # its lease ran out on its clock: it stops reading
        await until(lambda: held_up.takes == 2, "the released lease to be taken again")
        await write(store, 5)
        await until(lambda: 5 in seen, "the next write in Redis")
    entries, _ = await changes(link).after("-", 100)
    appended = [entry.record().keys["SK"] for entry in entries]
    assert sorted(appended) == [f"{n:04}" for n in range(6)]  # none appended again


READER_PROCESS = """
import asyncio, sys
from generated.table import TABLE
from keygraph.realtime.lease import Lease
from keygraph.realtime.reader import ElectedReader
from keygraph.shared.changes import ChangeLog
from keygraph.shared.link import Link
from keygraph.stores import stream_of
from keygraph.stores.embedded.store import EmbeddedStore
from generated.table import TABLE

async def main():
    store = EmbeddedStore(TABLE, path=sys.argv[1])
    log = ChangeLog(Link(sys.argv[2]), "keygraph:test:changes", 3600, 100_000, "PK")
    lease = Lease(store, {"PK": "~KEYGRAPH#READER", "SK": "test"}, 0.5, "child")
    lead = lambda on: print("leading" if on else "left", flush=True)
    await ElectedReader(stream_of(store), lease, log, 0.01, leading=lead).run()

asyncio.run(main())
"""


async def test_a_killed_holder_is_replaced_and_nothing_is_lost(
    store_factory: StoreFactory, link: Link, redis_server: RedisServer, tmp_path: Path
) -> None:
    store = await store_factory("embedded", TABLE)
    assert isinstance(store, EmbeddedStore)
    await write(store, 0)  # the change log exists before the child opens it
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        READER_PROCESS,
        str(store.path),
        redis_server.url,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    try:
        assert child.stdout is not None
        assert (await child.stdout.readline()).strip() == b"leading"
        leaders: set[str] = set()
        here = reader(store, link, "here", leaders)
        async with collecting(redis_server.url, link) as seen, running(here):
            await asyncio.gather(*(write(store, n) for n in range(1, 21)))
            await until(lambda: set(seen) >= set(range(1, 21)), "the child's appends")
            child.send_signal(signal.SIGKILL)
            await asyncio.gather(*(write(store, n) for n in range(21, 41)))
            await until(lambda: leaders == {"here"}, "this reader to take over")
            await until(lambda: set(seen) >= set(range(1, 41)), "every write in Redis")
    finally:
        with contextlib.suppress(ProcessLookupError):
            child.kill()
        await child.wait()

"""The stream relay of `serve --workers N` in process: a RelayedStream answers shards() and
read() as the stream it relays does, values exact, reading that stream once for many
workers, and from the stream itself for a position older than what the relay keeps; a
worker goes to the end of the embedded change log through it without reading a record."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from generated.table import TABLE
from keygraph.errors import StoreError
from keygraph.plan import Put
from keygraph.realtime.shards import ShardReader
from keygraph.stores import stream_of
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.streams import Position, Trimmed
from server.serving import relayed
from server.serving.relay import StreamRelay
from server.serving.relayed import RelayedStream
from tests.keygraph.stores.test_store_embedded_changes import records_read
from tests.server.realtime.memory_stream import MemoryStream
from tests.waiting import until


@pytest.fixture
def socket_path() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="kg") as directory:  # short: a socket's limit
        yield Path(directory) / "relay.sock"


@pytest.fixture
async def stream() -> MemoryStream:
    return MemoryStream()


@pytest.fixture
async def relay(stream: MemoryStream, socket_path: Path) -> AsyncIterator[StreamRelay]:
    relay = StreamRelay(stream, socket_path, min_interval=60, keep=2)
    await relay.start()
    yield relay
    await relay.stop()


async def _client(path: Path) -> AsyncIterator[RelayedStream]:
    client = RelayedStream(path)
    yield client
    await client.close()


@pytest.fixture
async def client(socket_path: Path) -> AsyncIterator[RelayedStream]:
    async for c in _client(socket_path):
        yield c


def _item(n: int) -> dict[str, object]:
    return {
        "PK": "T#acme",
        "SK": f"ITEM#{n}",
        "price": Decimal("12.50") + n,
        "blob": bytes([0, n, 255]),
        "tags": {"a", f"t{n}"},
        "nested": {"list": [1, Decimal("0.1"), None, True]},
    }


async def test_shards_and_records_cross_exactly(
    stream: MemoryStream, relay: StreamRelay, client: RelayedStream
) -> None:
    written = [stream.append("INSERT", new=_item(n)) for n in range(3)]
    stream.split()
    later = stream.append("MODIFY", old=_item(0), new=_item(9))
    assert await client.shards() == await stream.shards()
    first = await client.read(Position("shard-0"), limit=2)
    assert first.records == written[:2]
    assert not first.ended
    rest = await client.read(first.next)
    assert rest.records == written[2:]
    assert rest.ended
    assert (await client.read(Position("shard-1"))).records == [later]


async def test_many_workers_at_the_tail_read_the_stream_once(
    stream: MemoryStream, relay: StreamRelay, socket_path: Path
) -> None:
    record = stream.append("INSERT", new=_item(1))
    clients = [RelayedStream(socket_path) for _ in range(4)]
    try:
        batches = [await c.read(Position("shard-0")) for c in clients]
        assert [b.records for b in batches] == [[record]] * 4
        tails = [await c.read(b.next) for c, b in zip(clients, batches, strict=True)]
    finally:
        for c in clients:
            await c.close()
    assert [t.records for t in tails] == [[]] * 4
    assert relay.reads == 1  # the first read; the others, and the tails, from memory


async def test_a_resume_older_than_memory_reads_the_stream(
    stream: MemoryStream, relay: StreamRelay, client: RelayedStream
) -> None:
    records = [stream.append("INSERT", new=_item(n)) for n in range(8)]
    batch = await client.read(Position("shard-0"))
    assert batch.records == records
    reads = relay.reads
    resumed = await client.read(Position("shard-0", records[0].sequence))  # keep=2: dropped
    assert resumed.records == records[1:]
    assert relay.reads == reads + 1
    recent = await client.read(Position("shard-0", records[-2].sequence))  # still kept
    assert recent.records == records[-1:]
    assert relay.reads == reads + 1


async def test_a_trimmed_position_raises_trimmed(
    stream: MemoryStream, relay: StreamRelay, client: RelayedStream
) -> None:
    old = stream.append("INSERT", new=_item(1))
    stream.append("INSERT", new=_item(2))
    stream.trim()
    with pytest.raises(Trimmed):
        await client.read(Position("shard-0", old.sequence))


async def test_a_client_retries_until_the_relay_answers(
    stream: MemoryStream, socket_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(relayed, "CONNECT_PAUSE", 0.05)
    lonely = RelayedStream(socket_path)
    with pytest.raises(StoreError):
        await lonely.shards()
    relay = StreamRelay(stream, socket_path, min_interval=0)
    failed = 0
    exchange = lonely._exchange

    async def counted(request: dict[str, Any]) -> dict[str, Any]:
        nonlocal failed
        try:
            return await exchange(request)
        except OSError:
            failed += 1
            raise

    monkeypatch.setattr(lonely, "_exchange", counted)
    asking = asyncio.create_task(lonely.shards())
    await until(lambda: failed >= 1, "the client to fail once")
    await relay.start()
    try:
        assert await asking == await stream.shards()
    finally:
        await lonely.close()
        await relay.stop()


async def test_a_broken_request_closes_its_connection_only(
    stream: MemoryStream,
    relay: StreamRelay,
    client: RelayedStream,
    socket_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    reader, writer = await asyncio.open_unix_connection(str(socket_path))
    writer.write(b'{"op": "read"}\n')
    assert await asyncio.wait_for(reader.readline(), 5) == b""
    writer.close()
    assert await client.shards() == await stream.shards()
    assert [r.levelname for r in caplog.records] == ["WARNING"]


async def test_a_worker_goes_to_the_end_of_the_embedded_log_reading_no_record(
    tmp_path: Path, socket_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = EmbeddedStore(TABLE, path=tmp_path / "kg.sqlite3")
    for n in range(3):
        await store.put(Put(_item(n)))
    read = records_read(monkeypatch)
    relay = StreamRelay(stream_of(store), socket_path, min_interval=0)
    await relay.start()
    client = RelayedStream(socket_path)
    try:
        reader = ShardReader(client)
        await reader.catch_up()
        assert read == []
        await store.put(Put(_item(7)))
        (found,) = await reader.poll()
        assert [record.keys["SK"] for record in found.records] == ["ITEM#7"]
    finally:
        await client.close()
        await relay.stop()
        await store.close()

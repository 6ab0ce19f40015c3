"""The DynamoDB store's change stream on DynamoDB Local: writes through the store and from
outside keygraph read back in order with their images, resumed from a position, shard
iterators reused between polls and obtained again once expired, a closed shard read to its
end, and the errors of positions the stream does not have."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
import zlib
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from keygraph.errors import StoreUnavailable, ValidationError
from keygraph.plan import Delete, Put, TableDef, Update
from keygraph.stores import stream_of
from keygraph.stores.dynamodb import admin, connections
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET, DynamoDBLocal
from keygraph.stores.dynamodb.retry import RetryPolicy
from keygraph.stores.dynamodb.store import DynamoDBStore
from keygraph.stores.dynamodb.streams import TARGET_PREFIX, DynamoDBChangeStream
from keygraph.streams import NoStream, Position, StreamRecord, Trimmed
from testkit.faults import RESET_AFTER, FaultProxy, error

pytestmark = pytest.mark.dynamodb_local

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.004)
STREAM = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}


def create(client: Any, stream: dict[str, Any] | None = STREAM) -> TableDef:
    """A new table (PK, SK) with `stream` as its StreamSpecification (None: no stream)."""
    table = TableDef(f"kg_streams_{uuid.uuid4().hex[:12]}", "PK", "SK")
    request = admin.create_request(table)
    if stream is not None:
        request["StreamSpecification"] = stream
    client.create_table(**request)
    return table


@pytest.fixture
def streamed(dynamodb_client: Any) -> Iterator[TableDef]:
    table = create(dynamodb_client)
    yield table
    admin.delete_table(dynamodb_client, table.name)


@pytest.fixture
async def store(dynamodb_client: Any, streamed: TableDef) -> AsyncIterator[DynamoDBStore]:
    store = DynamoDBStore(streamed, client=dynamodb_client, max_concurrency=4, retry=FAST)
    yield store
    await store.close()


@pytest.fixture
async def stream(store: DynamoDBStore) -> AsyncIterator[DynamoDBChangeStream]:
    stream = stream_of(store)
    assert isinstance(stream, DynamoDBChangeStream)
    yield stream
    await stream.close()


def item(pk: str, **values: Any) -> dict[str, Any]:
    return {"PK": pk, "SK": "A", **values}


async def read_all(
    stream: DynamoDBChangeStream, position: Position, count: int
) -> list[StreamRecord]:
    """The next `count` records from `position`, waiting up to 5 s for them: DynamoDB Local
    adds a write's record to the stream a moment after answering the write."""
    records: list[StreamRecord] = []
    deadline = time.monotonic() + 5
    while len(records) < count and time.monotonic() < deadline:
        batch = await stream.read(position)
        records += batch.records
        position = batch.next
        if not batch.records:
            await asyncio.sleep(0.02)
    return records


async def holds(store: DynamoDBStore, position: Position, count: int) -> None:
    """Waits until the table's stream holds `count` records after `position`, read through a
    stream of its own: the one under test reads as if nothing had looked."""
    watcher = stream_of(store)
    assert isinstance(watcher, DynamoDBChangeStream)
    try:
        assert len(await read_all(watcher, position, count)) == count
    finally:
        await watcher.close()


async def only_shard(stream: DynamoDBChangeStream) -> str:
    shards = await stream.shards()
    assert len(shards) == 1
    return shards[0].shard_id


async def test_writes_through_the_store_and_outside_it_read_back_in_order(
    store: DynamoDBStore, stream: DynamoDBChangeStream, dynamodb_client: Any
) -> None:
    before = datetime.now(UTC)
    await store.put(Put(item("u1", name="Ada", n=1)))
    await store.update(Update({"PK": "u1", "SK": "A"}, set={"name": "Ada L."}))
    await store.transact_write([Put(item("u2", n=2)), Delete({"PK": "u1", "SK": "A"})])
    dynamodb_client.put_item(
        TableName=store.table.name,
        Item={"PK": {"S": "u3"}, "SK": {"S": "A"}, "tags": {"SS": ["x"]}, "b": {"B": b"\x00"}},
    )
    await store.delete(Delete({"PK": "u2", "SK": "A"}))
    shard = await only_shard(stream)
    records = await read_all(stream, Position(shard), 6)
    changes = [(r.event, r.keys["PK"], r.old, r.new) for r in records]
    assert changes == [
        ("INSERT", "u1", None, item("u1", name="Ada", n=1)),
        ("MODIFY", "u1", item("u1", name="Ada", n=1), item("u1", name="Ada L.", n=1)),
        ("INSERT", "u2", None, item("u2", n=2)),
        ("REMOVE", "u1", item("u1", name="Ada L.", n=1), None),
        ("INSERT", "u3", None, item("u3", tags={"x"}, b=b"\x00")),
        ("REMOVE", "u2", item("u2", n=2), None),
    ]
    assert all(r.keys == {"PK": r.keys["PK"], "SK": "A"} for r in records)
    sequences = [int(r.sequence) for r in records]
    assert sequences == sorted(set(sequences))
    # DynamoDB Local stamps records to the minute; AWS to the second.
    for record in records:
        assert before - timedelta(minutes=1) <= record.at <= datetime.now(UTC)


async def test_resume_from_a_position_in_another_reader(
    store: DynamoDBStore, stream: DynamoDBChangeStream
) -> None:
    for n in range(5):
        await store.put(Put(item(f"u{n}", n=n)))
    shard = await only_shard(stream)
    await read_all(stream, Position(shard), 5)
    first = await stream.read(Position(shard), limit=2)
    assert [r.new["n"] for r in first.records if r.new] == [0, 1]
    assert first.next == Position(shard, first.records[-1].sequence)
    assert not first.ended
    other = DynamoDBChangeStream(store)
    try:
        rest = await read_all(other, first.next, 3)
    finally:
        await other.close()
    assert [r.new["n"] for r in rest if r.new] == [2, 3, 4]
    again = await stream.read(first.next)
    assert [r.sequence for r in again.records] == [r.sequence for r in rest]


async def test_a_poller_keeps_its_iterator_between_reads(
    store: DynamoDBStore, stream: DynamoDBChangeStream
) -> None:
    shard = await only_shard(stream)
    position, seen = Position(shard), []
    for n in range(4):
        empty = await stream.read(position)
        assert (empty.records, empty.next, empty.ended) == ([], position, False)
        await store.put(Put(item(f"u{n}", n=n)))
        (record,) = await read_all(stream, position, 1)
        seen.append(record.new["n"] if record.new else None)
        position = Position(shard, record.sequence)
    assert seen == [0, 1, 2, 3]
    assert stream.iterator_requests == 1
    await stream.read(Position(shard))  # another position: a new iterator
    assert stream.iterator_requests == 2


class Faults:
    """Wraps a transport's connections: answers the next calls of an operation with the
    errors queued for it, passes everything else on."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.queued: dict[str, list[tuple[str, int]]] = {}
        self.calls: dict[str, int] = {}

    def fail(self, operation: str, *codes: str, status: int = 400) -> None:
        self.queued.setdefault(operation, []).extend((code, status) for code in codes)

    async def post(self, head: bytes, body: bytes, *, fresh: bool = False) -> connections.Reply:
        target = next(line for line in head.decode().split("\r\n") if "X-Amz-Target" in line)
        operation = target.partition(":")[2].strip().removeprefix(TARGET_PREFIX)
        self.calls[operation] = self.calls.get(operation, 0) + 1
        queued = self.queued.get(operation)
        if queued:
            code, status = queued.pop(0)
            data = json.dumps({"__type": f"com.amazonaws#{code}", "message": code}).encode()
            return connections.Reply(status, {"x-amz-crc32": str(zlib.crc32(data))}, data)
        reply: connections.Reply = await self.inner.post(head, body, fresh=fresh)
        return reply

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def faults(stream: DynamoDBChangeStream) -> Faults:
    faults = Faults(stream.transport.pool)
    stream.transport.pool = faults
    return faults


async def test_an_expired_iterator_is_obtained_again_from_the_last_record_read(
    store: DynamoDBStore, stream: DynamoDBChangeStream, faults: Faults
) -> None:
    shard = await only_shard(stream)
    await store.put(Put(item("u0", n=0)))
    (first,) = await read_all(stream, Position(shard), 1)
    await store.put(Put(item("u1", n=1)))
    await holds(store, Position(shard, first.sequence), 1)
    reads = faults.calls["GetRecords"]
    faults.fail("GetRecords", "ExpiredIteratorException")
    batch = await stream.read(Position(shard, first.sequence))
    assert [r.new["n"] for r in batch.records if r.new] == [1]
    assert stream.iterator_requests == 2
    assert faults.calls["GetRecords"] == reads + 2


async def test_an_iterator_expired_at_once_is_an_error(
    stream: DynamoDBChangeStream, faults: Faults
) -> None:
    shard = await only_shard(stream)
    faults.fail("GetRecords", "ExpiredIteratorException")
    with pytest.raises(StoreUnavailable, match="ExpiredIteratorException"):
        await stream.read(Position(shard))


async def test_throttling_is_retried(stream: DynamoDBChangeStream, faults: Faults) -> None:
    faults.fail("DescribeStream", "LimitExceededException")
    shard = await only_shard(stream)
    faults.fail("GetRecords", "LimitExceededException")
    assert (await stream.read(Position(shard))).records == []
    assert faults.calls == {"DescribeStream": 2, "GetShardIterator": 1, "GetRecords": 2}


async def test_server_errors_are_retried_as_the_calls_only_read(
    stream: DynamoDBChangeStream, faults: Faults
) -> None:
    shard = await only_shard(stream)
    faults.fail("GetShardIterator", "InternalFailure", status=500)
    faults.fail("GetRecords", "InternalFailure", status=500)
    assert (await stream.read(Position(shard))).records == []
    assert (faults.calls["GetShardIterator"], faults.calls["GetRecords"]) == (2, 2)


async def test_through_the_fault_proxy_a_lost_answer_and_an_expired_iterator_lose_nothing(
    dynamodb_local: DynamoDBLocal, streamed: TableDef, store: DynamoDBStore
) -> None:
    """On the wire: GetRecords run but its answer lost (the connection reset), then an
    iterator expired; the reader reads again and misses no record."""
    records = f"{TARGET_PREFIX}GetRecords"
    with FaultProxy(dynamodb_local.endpoint_url) as proxy:
        proxied = DynamoDBStore(
            streamed,
            endpoint_url=proxy.url,
            region=LOCAL_REGION,
            access_key_id=LOCAL_KEY_ID,
            secret_access_key=LOCAL_SECRET,
            retry=FAST,
        )
        stream = stream_of(proxied)
        assert isinstance(stream, DynamoDBChangeStream)
        try:
            shard = await only_shard(stream)
            await store.put(Put(item("u0", n=0)))
            (first,) = await read_all(stream, Position(shard), 1)
            await store.put(Put(item("u1", n=1)))
            await holds(store, Position(shard, first.sequence), 1)
            proxy.add(RESET_AFTER, operations={records}, times=1)
            proxy.add(error("ExpiredIteratorException"), operations={records}, times=1)
            batch = await stream.read(Position(shard, first.sequence))
        finally:
            await proxied.close()
    assert [r.new["n"] for r in batch.records if r.new] == [1]
    assert proxy.injected == {(records, "reset after"): 1, (records, "ExpiredIteratorException"): 1}
    assert stream.iterator_requests == 2


@pytest.mark.parametrize("operation", ["GetShardIterator", "GetRecords"])
async def test_trimmed_data_is_trimmed(
    stream: DynamoDBChangeStream, faults: Faults, operation: str
) -> None:
    shard = await only_shard(stream)
    faults.fail(operation, "TrimmedDataAccessException")
    with pytest.raises(Trimmed):
        await stream.read(Position(shard))


async def test_positions_the_stream_does_not_have(
    store: DynamoDBStore, stream: DynamoDBChangeStream
) -> None:
    """What DynamoDB Local answers: it keeps every record (nothing is trimmed) and numbers
    the records of all its streams from one counter, so a sequence number before the
    shard's first is invalid; one past its last reads nothing yet; one past what it can
    count fails inside it (a 500, retried, then unavailable). A shard it does not have is
    Trimmed when older than every shard kept, else not one of its shards; malformed ids and
    sequence numbers are refused before any call."""
    await store.put(Put(item("u0", n=0)))
    shard = await only_shard(stream)
    (record,) = await read_all(stream, Position(shard), 1)
    first = int(record.sequence)
    with pytest.raises(ValidationError, match="Invalid SequenceNumber"):
        await stream.read(Position(shard, f"{first - 1:021d}"))
    ahead = await stream.read(Position(shard, f"{first + 5:021d}"))
    assert ahead.records == []
    assert not ahead.ended
    with pytest.raises(StoreUnavailable, match="InternalFailure"):
        await stream.read(Position(shard, "9" * 21))
    with pytest.raises(Trimmed, match="past the stream's retention"):
        await stream.read(Position("shardId-00000000000000000001-00000000"))
    with pytest.raises(ValidationError, match="has no shard"):
        await stream.read(Position("shardId-99999999999999999999-00000000"))
    for bad in (Position("nonsense"), Position(shard, "1e3"), Position(shard, "1")):
        with pytest.raises(ValidationError):
            await stream.read(bad)
    for limit in (0, 1001):
        with pytest.raises(ValidationError, match="between 1 and 1000"):
            await stream.read(Position(shard), limit=limit)


async def test_a_closed_shard_ends(
    store: DynamoDBStore, stream: DynamoDBChangeStream, dynamodb_client: Any
) -> None:
    for n in range(3):
        await store.put(Put(item(f"u{n}", n=n)))
    shard = await only_shard(stream)
    await read_all(stream, Position(shard), 3)
    first = await stream.read(Position(shard), limit=2)
    assert not first.ended
    dynamodb_client.update_table(
        TableName=store.table.name, StreamSpecification={"StreamEnabled": False}
    )
    (closed,) = await stream.shards()
    assert (closed.shard_id, closed.closed) == (shard, True)
    last = await stream.read(first.next)
    assert [r.new["n"] for r in last.records if r.new] == [2]
    assert last.ended


@pytest.mark.parametrize("disabled", [False, True])
async def test_a_table_without_a_stream_says_what_to_declare(
    dynamodb_client: Any, disabled: bool
) -> None:
    """A table made without a stream, or whose stream was turned off (it keeps its
    LatestStreamArn)."""
    table = create(dynamodb_client, STREAM if disabled else None)
    if disabled:
        off = {"StreamEnabled": False}
        dynamodb_client.update_table(TableName=table.name, StreamSpecification=off)
    store = DynamoDBStore(table, client=dynamodb_client)
    stream = stream_of(store)
    assert isinstance(stream, DynamoDBChangeStream)
    try:
        with pytest.raises(NoStream, match="has no stream") as caught:
            await stream.shards()
        assert 'stream = "NEW_AND_OLD_IMAGES"' in str(caught.value)
    finally:
        await stream.close()
        await store.close()
        admin.delete_table(dynamodb_client, table.name)

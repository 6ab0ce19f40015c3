"""What reading a table's change stream costs on DynamoDB Local: client CPU per empty
GetRecords poll and per 100-record batch (our transport beside boto3's DynamoDB Streams
client, in alternating blocks), and the latency from a write to the poller reading its
record, polling every 100 ms and every second. Prints one JSON object and writes
bench/results/stream-dynamodb-local.json; bench/README.md records it.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import boto3

from bench import harness
from bench.machine import machine_info
from bench.stats import percentile
from keygraph.plan import Put, TableDef
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET, DynamoDBLocal
from keygraph.stores.dynamodb.store import DynamoDBStore
from keygraph.stores.dynamodb.streams import DynamoDBChangeStream
from keygraph.streams import Position

SIZES = {
    "full": {"polls": 400, "batches": 20, "writes": 300, "write_gap": 0.05},
    "quick": {"polls": 20, "batches": 2, "writes": 10, "write_gap": 0.02},
}
"""Empty polls and 100-record batches timed per client; writes timed per poll interval, a
random gap of up to twice `write_gap` seconds apart."""
INTERVALS = (0.1, 1.0)
BLOCK = 10
"""Calls per block when the two clients alternate."""


def streamed_table(client: Any) -> TableDef:
    """A new table (PK, SK) with a NEW_AND_OLD_IMAGES stream."""
    table = TableDef(f"kg_stream_bench_{uuid.uuid4().hex[:8]}", "PK", "SK")
    request = admin.create_request(table)
    request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    client.create_table(**request)
    return table


async def caught_up(stream: DynamoDBChangeStream, position: Position, count: int) -> Position:
    """The position after the next `count` records (waiting for them to reach the stream)."""
    seen = 0
    while seen < count:
        batch = await stream.read(position, limit=count - seen)
        seen += len(batch.records)
        position = batch.next
        if not batch.records:
            await asyncio.sleep(0.01)
    return position


async def at_end(stream: DynamoDBChangeStream, position: Position) -> Position:
    """The position after the last record the shard holds now."""
    while (batch := await stream.read(position)).records:
        position = batch.next
    return batch.next


async def cpu_ms(calls: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    """Client CPU of each of `calls` calls, in ms."""
    spent = []
    for _ in range(calls):
        started = time.process_time()
        await call()
        spent.append((time.process_time() - started) * 1000)
    return spent


async def poll_cost(
    stream: DynamoDBChangeStream, boto: Any, store: DynamoDBStore, sizes: dict[str, Any]
) -> dict[str, Any]:
    """CPU per empty poll and per 100-record batch, ours beside boto3's, alternating."""
    arn = await stream.stream_arn()
    (shard,) = await stream.shards()
    position = await at_end(stream, Position(shard.shard_id))
    iterator = boto.get_shard_iterator(
        StreamArn=arn, ShardId=shard.shard_id, ShardIteratorType="LATEST"
    )["ShardIterator"]

    async def ours_empty() -> None:
        nonlocal position
        batch = await stream.read(position)
        assert not batch.records
        position = batch.next

    async def boto_empty() -> None:
        nonlocal iterator
        answer = boto.get_records(ShardIterator=iterator)
        assert not answer["Records"]
        iterator = answer["NextShardIterator"]

    empty: dict[str, list[float]] = {"ours": [], "boto3": []}
    for _ in range(sizes["polls"] // BLOCK):
        empty["ours"] += await cpu_ms(BLOCK, ours_empty)
        empty["boto3"] += await cpu_ms(BLOCK, boto_empty)

    full: dict[str, list[float]] = {"ours": [], "boto3": []}
    for n in range(sizes["batches"]):
        start = position
        for part in range(0, 100, 25):  # BatchWriteItem takes 25 items
            puts = [Put({"PK": f"b{n}.{i}", "SK": "A", "n": i}) for i in range(part, part + 25)]
            await store.batch_write(puts)
        position = await caught_up(stream, start, 100)
        boto_start = (
            boto.get_shard_iterator(
                StreamArn=arn,
                ShardId=shard.shard_id,
                ShardIteratorType="AFTER_SEQUENCE_NUMBER",
                SequenceNumber=start.after,
            )["ShardIterator"]
            if start.after
            else iterator
        )

        async def ours_full(start: Position = start) -> None:
            assert len((await stream.read(start, limit=100)).records) == 100

        async def boto_full(it: str = boto_start) -> None:
            assert len(boto.get_records(ShardIterator=it, Limit=100)["Records"]) == 100

        full["ours"] += await cpu_ms(1, ours_full)
        full["boto3"] += await cpu_ms(1, boto_full)
        iterator = boto.get_shard_iterator(
            StreamArn=arn,
            ShardId=shard.shard_id,
            ShardIteratorType="AFTER_SEQUENCE_NUMBER",
            SequenceNumber=position.after,
        )["ShardIterator"]
    median = statistics.median
    return {
        "empty_polls": len(empty["ours"]),
        "empty_cpu_ms": round(median(empty["ours"]), 3),
        "empty_cpu_ms_boto3": round(median(empty["boto3"]), 3),
        "batches": len(full["ours"]),
        "batch100_cpu_ms": round(median(full["ours"]), 2),
        "batch100_cpu_ms_boto3": round(median(full["boto3"]), 2),
        "boto3_over_ours_empty": round(median(empty["boto3"]) / median(empty["ours"]), 2),
        "boto3_over_ours_batch100": round(median(full["boto3"]) / median(full["ours"]), 2),
    }


async def latency(
    store: DynamoDBStore, stream: DynamoDBChangeStream, interval: float, sizes: dict[str, Any]
) -> dict[str, Any]:
    """Writes at random gaps while a poller reads every `interval` s (at once again after a
    full batch): the time from each write's start to the poller holding its record, and
    from the write's answer."""
    (shard,) = await stream.shards()
    position = await at_end(stream, Position(shard.shard_id))
    started: dict[str, float] = {}
    answered: dict[str, float] = {}
    seen: dict[str, float] = {}
    requests_before = stream.iterator_requests
    writes = sizes["writes"]

    async def writer() -> None:
        for n in range(writes):
            await asyncio.sleep(random.uniform(0, 2 * sizes["write_gap"]))
            key = f"l{interval}.{n}"
            started[key] = time.perf_counter()
            await store.put(Put({"PK": key, "SK": "A", "n": n}))
            answered[key] = time.perf_counter()

    async def poller() -> None:
        nonlocal position
        while len(seen) < writes:
            batch = await stream.read(position)
            now = time.perf_counter()
            seen.update((r.keys["PK"], now) for r in batch.records)
            position = batch.next
            if len(batch.records) < 1000:
                await asyncio.sleep(interval)

    await asyncio.gather(writer(), poller())
    ms = [(seen[key] - started[key]) * 1000 for key in started]
    after_answer = [(seen[key] - answered[key]) * 1000 for key in answered]
    put_ms = [(answered[key] - started[key]) * 1000 for key in started]
    return {
        "interval_ms": round(interval * 1000),
        "writes": writes,
        "p50_ms": round(statistics.median(ms), 1),
        "p99_ms": round(percentile(ms, 0.99), 1),
        "after_answer_p50_ms": round(statistics.median(after_answer), 1),
        "put_p50_ms": round(statistics.median(put_ms), 1),
        "iterator_requests": stream.iterator_requests - requests_before,
    }


async def measure(local: DynamoDBLocal, quick: bool = False) -> dict[str, Any]:
    sizes = SIZES["quick" if quick else "full"]
    session = boto3.session.Session(LOCAL_KEY_ID, LOCAL_SECRET, region_name=LOCAL_REGION)
    client = session.client("dynamodb", endpoint_url=local.endpoint_url)
    boto = session.client("dynamodbstreams", endpoint_url=local.endpoint_url)
    results: dict[str, Any] = {"store": "dynamodb-local"}
    try:
        table = streamed_table(client)
        store = DynamoDBStore(table, client=client, max_concurrency=4)
        stream = DynamoDBChangeStream(store)
        try:
            results["poll_cost"] = await poll_cost(stream, boto, store, sizes)
            results["latency"] = [
                await latency(store, stream, interval, sizes) for interval in INTERVALS
            ]
        finally:
            await stream.close()
            await store.close()
            admin.delete_table(client, table.name)
    finally:
        client.close()
        boto.close()
    return results


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser("dynamodb-stream", __doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run: few calls")
    args = parser.parse_args(argv)
    with DynamoDBLocal() as local:
        result = asyncio.run(measure(local, args.quick))
    text = json.dumps({**result, "machine": machine_info()}, indent=2) + "\n"
    if not args.quick:
        (Path(__file__).with_name("results") / "stream-dynamodb-local.json").write_text(text)
    print(text, end="")

"""Store micro-benchmarks: latency per operation on both stores, client CPU per DynamoDB call
(our lean transport) against boto3's resource Table API, the (de)serialiser and SigV4 signer
against boto3's and botocore's, and embedded point reads at 10k and 1M items.

    python -m bench store [--quick]

prints a markdown table. The 1M-item SQLite file is built once (one executemany in one
transaction) and cached under .keygraph/bench/.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import sqlite3
import tempfile
import time
import timeit
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import boto3
from boto3.dynamodb.conditions import Key
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials, ReadOnlyCredentials

from bench import harness
from bench.stats import median, median_ratio, percentile
from keygraph.plan import BatchGet, Get, Put, Query
from keygraph.store import Store
from keygraph.stores.dynamodb import admin, wire
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET, DynamoDBLocal
from keygraph.stores.dynamodb.sigv4 import Signer
from keygraph.stores.dynamodb.store import DynamoDBStore, make_client
from keygraph.stores.dynamodb.transport import CONTENT_TYPE, TARGET_PREFIX
from keygraph.stores.embedded import schema as sqlite_schema
from keygraph.stores.embedded import values
from keygraph.stores.embedded.store import EmbeddedStore
from testkit.stores import TEST_TABLE, unique_table

CACHE = Path(__file__).resolve().parents[1] / ".keygraph" / "bench"
Row = tuple[str, str, str, str]
CPU_BLOCKS = 5


def order(i: int, partition: str = "bench") -> dict[str, Any]:
    """A realistic item: an order with five line items (~600 bytes)."""
    return {
        "PK": partition,
        "SK": f"ORDER#2024-05-{i % 28 + 1:02}T10:00:00.000000Z#{i:07}",
        "type": "Order",
        "status": "PAID",
        "total_cents": 1999 * (i % 7 + 1),
        "currency": "EUR",
        "version": 3,
        "GSI1PK": f"T#acme#STATUS#PAID#{i % 10}",
        "GSI1SK": f"2024-05-{i % 28 + 1:02}#{i:07}",
        "items": [
            {"sku": f"SKU-{j}", "name": f"Widget {j} ünïcode", "quantity": j + 1, "unit": 499}
            for j in range(5)
        ],
    }


async def timed(fn: Callable[[], Awaitable[Any]], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - start)
    return samples


def ms(samples: list[float]) -> tuple[str, str]:
    return f"{median(samples) * 1e3:.3f}", f"{percentile(samples, 0.99) * 1e3:.3f}"


async def seed(store: Store) -> None:
    """100 orders in partition "bench"."""
    for chunk in range(0, 100, 25):
        await store.batch_write([Put(order(i)) for i in range(chunk, chunk + 25)])


async def latency_rows(name: str, store: Store, runs: int) -> list[Row]:
    await seed(store)
    keys = tuple({"PK": "bench", "SK": order(i)["SK"]} for i in range(100))
    counter = iter(range(10**9))

    def transaction() -> Awaitable[None]:
        n = next(counter)
        return store.transact_write([Put(order(n * 10 + j, "tx")) for j in range(10)])

    operations: dict[str, Callable[[], Awaitable[Any]]] = {
        "GetItem": lambda: store.get(Get(keys[next(counter) % 100])),
        "Query (10 items)": lambda: store.query(Query("bench", limit=10)),
        "BatchGet (100)": lambda: store.batch_get(BatchGet(keys)),
        "Put": lambda: store.put(Put(order(next(counter), "put"))),
        "Transaction (10 puts)": transaction,
    }
    rows = []
    for label, fn in operations.items():
        await timed(fn, max(3, runs // 10))  # warm up
        p50, p99 = ms(await timed(fn, runs))
        rows.append((f"{name}: {label}", p50, p99, "ms"))
    return rows


async def cpu_rows(store: DynamoDBStore, endpoint: str, runs: int) -> list[Row]:
    """Client CPU (all threads of this process) per call: our store (signed JSON over our
    transport's connections) vs the resource API (botocore's whole pipeline)."""
    await seed(store)
    resource: Any = boto3.resource(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=LOCAL_REGION,
        aws_access_key_id=LOCAL_KEY_ID,
        aws_secret_access_key=LOCAL_SECRET,
    )
    table = resource.Table(store.table.name)
    keys = [{"PK": "bench", "SK": order(i)["SK"]} for i in range(100)]
    counter = iter(range(10**9))

    def resource_transaction() -> Any:
        n = next(counter)
        items = [
            {
                "Put": {
                    "TableName": table.name,
                    "Item": order(n * 10 + j, "rtx"),
                }
            }
            for j in range(10)
        ]
        # The resource's client takes Python values (it serialises them itself).
        return table.meta.client.transact_write_items(TransactItems=items)

    resource_ops: dict[str, Callable[[], Any]] = {
        "GetItem": lambda: table.get_item(Key=keys[next(counter) % 100]),
        "Query (10 items)": lambda: table.query(
            KeyConditionExpression=Key("PK").eq("bench"), Limit=10
        ),
        "BatchGet (100)": lambda: resource.batch_get_item(
            RequestItems={table.name: {"Keys": keys}}
        ),
        "Put": lambda: table.put_item(Item=order(next(counter), "rput")),
        "Transaction (10 puts)": resource_transaction,
    }
    ours: dict[str, Callable[[], Awaitable[Any]]] = {
        "GetItem": lambda: store.get(Get(keys[next(counter) % 100])),
        "Query (10 items)": lambda: store.query(Query("bench", limit=10)),
        "BatchGet (100)": lambda: store.batch_get(BatchGet(tuple(keys))),
        "Put": lambda: store.put(Put(order(next(counter), "oput"))),
        "Transaction (10 puts)": lambda: store.transact_write(
            [Put(order(next(counter) * 10 + j, "otx")) for j in range(10)]
        ),
    }
    rows = []
    block = max(1, runs // CPU_BLOCKS)
    for label, call in ours.items():
        for _ in range(max(3, runs // 10)):
            resource_ops[label]()
            await call()
        # Alternate short blocks, so a burst of load from other processes lands on both.
        theirs, mine = [], []
        for _ in range(CPU_BLOCKS):
            start = time.process_time()
            for _ in range(block):
                resource_ops[label]()
            theirs.append((time.process_time() - start) / block)
            start = time.process_time()
            for _ in range(block):
                await call()
            mine.append((time.process_time() - start) / block)
        ratio = median_ratio(mine, theirs)
        rows.append(
            (
                f"client CPU per call: {label}",
                f"{median(mine) * 1e6:.0f}",
                f"{median(theirs) * 1e6:.0f}",
                f"µs (ours, resource Table); median block ratio {ratio:.2f}",
            )
        )
    return rows


def codec_rows(runs: int) -> list[Row]:
    """Our serialiser and SigV4 signer against boto3's and botocore's."""
    item = order(1)
    serializer, deserializer = TypeSerializer(), TypeDeserializer()
    encoded = wire.serialize_item(item)
    body = json.dumps({"TableName": "t", "Key": {"PK": {"S": "a"}, "SK": {"S": "b"}}}).encode()
    head = {"Content-Type": CONTENT_TYPE, "X-Amz-Target": TARGET_PREFIX + "GetItem"}
    signer, frozen = Signer(LOCAL_REGION), ReadOnlyCredentials(LOCAL_KEY_ID, LOCAL_SECRET, None)
    botocore_signer = SigV4Auth(Credentials(LOCAL_KEY_ID, LOCAL_SECRET), "dynamodb", LOCAL_REGION)
    cases: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "serialise one order item": (
            lambda: wire.serialize_item(item),
            lambda: {k: serializer.serialize(v) for k, v in item.items()},
        ),
        "deserialise one order item": (
            lambda: wire.deserialize_item(encoded),
            lambda: {k: deserializer.deserialize(v) for k, v in encoded.items()},  # type: ignore[arg-type]
        ),
        "sign one GetItem request": (
            lambda: signer.sign({**head, "Host": "127.0.0.1:8000"}, body, frozen),
            lambda: botocore_signer.add_auth(
                AWSRequest("POST", "http://127.0.0.1:8000/", data=body, headers=dict(head))
            ),
        ),
    }
    rows = []
    for label, (mine, theirs) in cases.items():
        # The best of several repeats: contention from other processes only adds time.
        times = [
            min(timeit.repeat(fn, number=runs * 4, repeat=7)) / (runs * 4) for fn in (mine, theirs)
        ]
        rows.append(
            (
                label,
                f"{times[0] * 1e6:.1f}",
                f"{times[1] * 1e6:.1f}",
                f"µs (ours, boto3/botocore); ratio {times[0] / times[1]:.2f}",
            )
        )
    return rows


def build_embedded(path: Path, count: int) -> None:
    """A file of `count` orders written with one executemany in one transaction."""
    if path.exists():
        return
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    conn = sqlite3.connect(partial, isolation_level=None)
    sqlite_schema.ensure(conn, TEST_TABLE)
    insert = sqlite_schema.insert_statement(TEST_TABLE.indexes)

    # Items differ only in their keys (strings): encode the rest once, as the store would.
    keyed = ("PK", "SK", "GSI1PK", "GSI1SK")
    rest = {k: v for k, v in order(0).items() if k not in keyed}
    rest_wire, rest_size = values.encode_item(rest)
    rest_plain = values.plain_body(rest_wire)
    if rest_plain is None:
        raise ValueError("the scale check's orders should be stored as plain JSON")
    rest_item = json.loads(rest_plain)

    def rows() -> Any:
        for i in range(count):
            item = order(i, f"P{i // 10:07}")
            keys = {k: item[k] for k in keyed}
            key_size = values.encode_item(keys)[1]
            body = json.dumps({**keys, **rest_item}, ensure_ascii=False, separators=(",", ":"))
            size = key_size + rest_size
            columns: list[Any] = [item["PK"], item["SK"], body, size, 1]
            for index in TEST_TABLE.indexes:
                columns += sqlite_schema.index_values(index, item)
            yield columns

    conn.execute("BEGIN")
    conn.executemany(insert, rows())
    conn.execute("COMMIT")
    conn.close()
    partial.rename(path)


async def point_read_p50(path: Path, count: int, runs: int) -> float:
    store = EmbeddedStore(TEST_TABLE, path=path)
    rng = random.Random(7)
    picks = [rng.randrange(count) for _ in range(runs)]
    samples = []
    for i in picks:
        key = {"PK": f"P{i // 10:07}", "SK": order(i)["SK"]}
        start = time.perf_counter()
        found = await store.get(Get(key))
        samples.append(time.perf_counter() - start)
        assert found is not None
    await store.close()
    return median(samples)


async def scale_rows(large: int, runs: int) -> list[Row]:
    CACHE.mkdir(parents=True, exist_ok=True)
    tag = hashlib.sha256(sqlite_schema.BODY_FORMAT.encode()).hexdigest()[:8]
    small_path = CACHE / f"embedded-10k-{tag}.sqlite3"
    large_path = CACHE / f"embedded-{large}-{tag}.sqlite3"
    start = time.perf_counter()
    await asyncio.to_thread(build_embedded, small_path, 10_000)
    await asyncio.to_thread(build_embedded, large_path, large)
    built = time.perf_counter() - start
    small = await point_read_p50(small_path, 10_000, runs)
    big = await point_read_p50(large_path, large, runs)
    return [
        ("embedded GetItem p50 at 10k items", f"{small * 1e6:.1f}", "", "µs"),
        (
            f"embedded GetItem p50 at {large:,} items",
            f"{big * 1e6:.1f}",
            "",
            f"µs; ratio {big / small:.2f} (build {built:.0f} s, cached)",
        ),
    ]


async def concurrent_row(store: DynamoDBStore, runs: int) -> Row:
    """Client CPU per call with 50 Queries in flight at once, as a page of users' orders
    are asked for (the store must be seeded)."""
    rounds = max(2, runs // 10)

    async def wave() -> None:
        await asyncio.gather(*(store.query(Query("bench", limit=6)) for _ in range(50)))

    await wave()
    start = time.process_time()
    for _ in range(rounds):
        await wave()
    per_call = (time.process_time() - start) / (rounds * 50)
    return ("client CPU per call, 50 Queries at once", f"{per_call * 1e6:.0f}", "-", "µs")


def show(rows: list[Row]) -> None:
    for row in rows:
        print("| " + " | ".join(row) + " |", flush=True)


async def measure(quick: bool) -> None:
    runs = 50 if quick else 300
    print("| measure | median / value | p99 / other | unit |")
    print("|---|---:|---:|---|", flush=True)
    show(codec_rows(runs))
    with tempfile.TemporaryDirectory() as tmp:
        embedded = EmbeddedStore(TEST_TABLE, path=Path(tmp) / "bench.sqlite3")
        show(await latency_rows("embedded", embedded, runs))
        await embedded.close()
    with DynamoDBLocal() as local:
        client = make_client(
            local.endpoint_url, LOCAL_REGION, 16, LOCAL_KEY_ID, LOCAL_SECRET, read_timeout=60
        )
        table = unique_table(TEST_TABLE)
        admin.create_table(client, table)
        store = DynamoDBStore(table, client=client)
        show(await cpu_rows(store, local.endpoint_url, runs))
        show([await concurrent_row(store, runs)])
        show(await latency_rows("DynamoDB Local", store, runs))
        await store.close()
        client.close()
    show(await scale_rows(100_000 if quick else 1_000_000, runs * 20))


def main(argv: Sequence[str]) -> None:
    parser = harness.parser("store", __doc__)
    parser.add_argument("--quick", action="store_true", help="fewer runs, 100k instead of 1M")
    asyncio.run(measure(parser.parse_args(argv).quick))

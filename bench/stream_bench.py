"""What the embedded store's change log costs a write: puts that insert, puts that modify
and deletes, on one file with the stream off and one with it on (NEW_AND_OLD_IMAGES), in
alternating rounds; then how fast a reader drains the log, and what a reader at its end pays
to poll. Prints one JSON object and writes
bench/results/stream-embedded.json; bench/README.md records it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import harness
from bench.machine import machine_info
from keygraph.plan import Delete, Put
from keygraph.stores import stream_of
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.streams import Position
from testkit.stores import TEST_TABLE

OPERATIONS = ("insert", "modify", "delete")


def _item(round_: int, n: int, filler: str) -> dict[str, Any]:
    """An item of about 250 bytes, in one of 50 partitions, in the general index."""
    key = {"PK": f"P{n % 50}", "SK": f"R{round_}#{n:06d}"}
    return {**key, "GSI1PK": "G", "GSI1SK": f"{n:06d}", "body": filler * 200, "n": n}


async def _round(store: EmbeddedStore, round_: int, writes: int) -> dict[str, float]:
    """Microseconds per write of each operation, over `writes` items, by wall time and by
    this thread's CPU time (steadier on a busy machine)."""
    took: dict[str, float] = {}
    for operation, filler in zip(OPERATIONS, "xy-", strict=True):
        started, cpu = time.perf_counter(), time.thread_time()
        for n in range(writes):
            item = _item(round_, n, filler)
            if operation == "delete":
                await store.delete(Delete({"PK": item["PK"], "SK": item["SK"]}))
            else:
                await store.put(Put(item))
        took[operation] = (time.perf_counter() - started) / writes * 1e6
        took[f"{operation}_cpu"] = (time.thread_time() - cpu) / writes * 1e6
    return took


async def measure(root: Path, writes: int = 2000, rounds: int = 7) -> dict[str, Any]:
    off = EmbeddedStore(TEST_TABLE, path=root / "off.sqlite3")
    on = EmbeddedStore(
        dataclasses.replace(TEST_TABLE, stream="NEW_AND_OLD_IMAGES"), path=root / "on.sqlite3"
    )
    runs: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
    for round_ in range(rounds):
        runs["off"].append(await _round(off, round_, writes))
        runs["on"].append(await _round(on, round_, writes))
    result: dict[str, Any] = {"writes_per_round": writes, "rounds": rounds}
    pairs = list(zip(runs["on"], runs["off"], strict=True))
    for operation in OPERATIONS:
        result[operation] = {}
        for suffix in ("", "_cpu"):
            name = operation + suffix
            result[operation] |= {
                f"off{suffix}_us": round(statistics.median(r[name] for r in runs["off"]), 1),
                f"on{suffix}_us": round(statistics.median(r[name] for r in runs["on"]), 1),
                ("cpu_ratio" if suffix else "ratio"): round(
                    statistics.median(a[name] / b[name] for a, b in pairs), 2
                ),
            }
    stream = stream_of(on)
    started = time.perf_counter()
    read = 0
    for shard in await stream.shards():
        position = Position(shard.shard_id)
        while True:
            batch = await stream.read(position)
            read += len(batch.records)
            position = batch.next
            if batch.ended or not batch.records:
                break
    seconds = time.perf_counter() - started
    result["read"] = {"records": read, "records_per_second": round(read / seconds)}
    result["poll_us"] = await _polls(on, position, writes)
    await off.close()
    await on.close()
    return result


async def _polls(store: EmbeddedStore, position: Position, polls: int) -> dict[str, float]:
    """Microseconds a reader at the end of the log takes to find nothing new, and to read
    the one record just written."""
    stream = stream_of(store)
    idle: list[float] = []
    for _ in range(polls):
        started = time.perf_counter()
        await stream.read(position)
        idle.append(time.perf_counter() - started)
    one: list[float] = []
    for n in range(polls):
        await store.put(Put({"PK": "POLL", "SK": f"{n:06d}", "n": n}))
        started = time.perf_counter()
        batch = await stream.read(position)
        one.append(time.perf_counter() - started)
        position = batch.next
    return {
        "idle": round(statistics.median(idle) * 1e6, 1),
        "one_record": round(statistics.median(one) * 1e6, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser("change-log", __doc__)
    parser.add_argument("--writes", type=int, default=2000, help="items per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, help="default bench/results/stream-embedded.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keygraph-stream-bench-") as tmp:
        result = asyncio.run(measure(Path(tmp), args.writes, args.rounds))
    text = json.dumps({**result, "machine": machine_info()}, indent=2) + "\n"
    out = args.out or Path(__file__).with_name("results") / "stream-embedded.json"
    out.write_text(text)
    print(text, end="")

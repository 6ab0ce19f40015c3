"""What a subscription's replay from an old cursor costs when another tenant wrote most of
the stream since: the embedded change log holding OTHERS users of one tenant and a few of
the subscriber's, replayed as before (every record read and decoded, then filtered to the
tenant) and as now (only the tenant's records, in reads of 200 with the loop let run
between). Reports the replay's CPU, the longest it held the loop, and the points it paid.
Prints one JSON object and writes bench/results/replay-embedded.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.machine import machine_info
from generated.models.user import User
from generated.table import TABLE
from keygraph.plan import Put
from keygraph.realtime.hub import Hub
from keygraph.stores import stream_of
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.streams import ChangeStream, Position
from server.realtime.changes import change_of, tenant_partitions


def _user(tenant: str, n: int) -> dict[str, Any]:
    user = User(
        user_id=f"u{n}",
        email=f"u{n}@{tenant}.example",
        name=f"User {n}",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        version=1,
    )
    return user.to_item(tenant)


async def _before(stream: ChangeStream, start: Position) -> tuple[int, int]:
    """The replay as it was: every record read (1000 a read) and decoded, then filtered;
    the changes found, and no points paid."""
    position, found = start, 0
    while True:
        batch = await stream.read(position)
        found += sum(
            1
            for record in batch.records
            if (change := change_of(record, position.shard_id)) and change.tenant == "acme"
        )
        if batch.ended or not batch.records:
            return found, 0
        position = batch.next


async def _now(hub: Hub, start: Position) -> tuple[int, int]:
    """The replay as it is: the changes found, and the points paid."""
    paid = [0]

    def pay(points: int) -> None:
        paid[0] += points

    async def trimmed() -> None:
        return None

    found = 0
    async for change in hub.replay([start], trimmed, tenant_partitions("acme"), pay):
        found += change.tenant == "acme"
    return found, paid[0]


async def _timed(replay: Awaitable[tuple[int, int]]) -> tuple[float, float, int, int]:
    """A replay's CPU, the longest a ticker task beside it waited for the loop (what every
    other request on the worker waits), its changes and its points."""
    done, longest = False, 0.0

    async def ticker() -> None:
        nonlocal longest
        while not done:
            began = time.perf_counter()
            await asyncio.sleep(0)
            longest = max(longest, time.perf_counter() - began)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    began = time.thread_time()
    found, paid = await replay
    cpu = time.thread_time() - began
    done = True
    await ticking
    return cpu, longest, found, paid


async def measure(root: Path, others: int, rounds: int) -> dict[str, Any]:
    store = EmbeddedStore(TABLE, path=root / "replay.db")
    for n in range(others):
        await store.put(Put(_user("globex", n)))
        if n % (others // 10) == 0:
            await store.put(Put(_user("acme", n)))
    stream = stream_of(store)
    (shard,) = await stream.shards()
    start = Position(shard.shard_id)
    hub = Hub(stream, 0.01, change_of)
    runs: dict[str, list[tuple[float, float, int, int]]] = {"before": [], "now": []}
    for _ in range(rounds):
        runs["before"].append(await _timed(_before(stream, start)))
        runs["now"].append(await _timed(_now(hub, start)))
    await store.close()
    return {
        "other_tenant_records": others,
        **{
            name: {
                "cpu_ms": round(statistics.median(r[0] for r in timed) * 1e3, 2),
                "longest_loop_wait_ms": round(statistics.median(r[1] for r in timed) * 1e3, 2),
                "changes": timed[0][2],
                "points_paid": timed[0][3],
            }
            for name, timed in runs.items()
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.replay_bench", description=__doc__)
    parser.add_argument("--others", type=int, default=50_000, help="another tenant's records")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="default bench/results/replay-embedded.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keygraph-replay-bench-") as tmp:
        result = asyncio.run(measure(Path(tmp), args.others, args.rounds))
    text = json.dumps({**result, "machine": machine_info()}, indent=2) + "\n"
    out = args.out or Path(__file__).with_name("results") / "replay-embedded.json"
    out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()

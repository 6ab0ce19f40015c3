"""What the in-process benches that compare arms on each executor share: one seeded embedded
store, the arms measured on it for every executor, and the command line that writes the
report to bench/results and prints it."""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench import harness
from bench.asgi import Answer, AsgiClient
from bench.machine import machine_info
from bench.targets import EXECUTORS, Executor, auth_headers, compiled_app, production_settings
from generated.table import TABLE
from keygraph.serve.document_cache import DocumentCache
from keygraph.stores.embedded.store import EmbeddedStore
from server.seed.tenant import SeedSizes, seed

Send = Callable[[], Awaitable[Answer]]
"""One request of an arm, sent again at each call."""

Arms = Callable[[EmbeddedStore, Path, Executor, int], Awaitable[dict[str, Any]]]
"""One executor's arms, measured over `rounds` on the seeded store (its data dir given)."""


def clients(
    store: EmbeddedStore, data: Path, executor: Executor, tenant: str
) -> tuple[AsgiClient, AsgiClient]:
    """An admin's client of the compiled API on `executor` with no budget to run out, and
    one of the same app keeping no document (each text parsed and validated as written)."""
    settings = production_settings(data)
    headers = auth_headers(settings, tenant)
    as_written = compiled_app(settings, store, executor, documents=DocumentCache(0, 0))
    return AsgiClient(compiled_app(settings, store, executor), headers), AsgiClient(
        as_written, headers
    )


async def user_cpu(send: Send) -> float:
    """The process CPU time one request of `send` takes; it must answer a user."""
    started = time.process_time()
    answer = await send()
    taken = time.process_time() - started
    assert answer.status_code == 200, answer.text
    assert b'"data":{"user":{' in answer.content, answer.text
    return taken


def cycling(client: AsgiClient, bodies: list[dict[str, Any]]) -> Send:
    """Sends the bodies one after another, round and round."""
    turn = itertools.cycle(bodies)
    return lambda: client.post("/graphql", json=next(turn))


async def interleave(
    arms: dict[str, Send],
    rounds: int,
    timed: Callable[[Send], Awaitable[float]] = user_cpu,
) -> dict[str, Any]:
    """Mean and median CPU time (µs) per request of each arm, taken by `timed`, one of each
    per round, in turns (the order reversed every other round)."""
    names = list(arms)
    taken: dict[str, list[float]] = {name: [] for name in names}
    for name in names:
        for _ in range(20):
            await timed(arms[name])
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            taken[name].append(await timed(arms[name]))
    result: dict[str, Any] = {"rounds": rounds}
    for name in names:
        result[f"{name}_mean_us"] = round(statistics.fmean(taken[name]) * 1e6, 1)
        result[f"{name}_p50_us"] = round(statistics.median(taken[name]) * 1e6, 1)
    return result


def ratios(result: dict[str, Any], pairs: list[tuple[str, str]]) -> None:
    """Adds to `result` each pair's ratio of the first arm's CPU time to the second's."""
    for first, second in pairs:
        for stat in ("p50", "mean"):
            ratio = result[f"{first}_{stat}_us"] / result[f"{second}_{stat}_us"]
            result[f"{first}/{second}_{stat}"] = round(ratio, 3)


async def run_by_executor(sizes: SeedSizes, tenant: str, arms: Arms, rounds: int) -> dict[str, Any]:
    """The report: the machine, the data's sizes and every executor's arms."""
    with tempfile.TemporaryDirectory() as data:
        store = EmbeddedStore(TABLE, path=Path(data) / "bench.sqlite3")
        await seed(store, tenant, sizes, progress=False)
        results: dict[str, Any] = {}
        for executor in EXECUTORS:
            results.update(await arms(store, Path(data), executor, rounds))
        await store.close()
    return {"machine": machine_info(), "sizes": asdict(sizes), "results": results}


def command_line(
    name: str,
    doc: str | None,
    run: Callable[[int], Coroutine[Any, Any, dict[str, Any]]],
    results: Path,
    argv: Sequence[str],
) -> None:
    """`--rounds N` (3,000 by default), then the report written to `results` and printed."""
    parser = harness.parser(name, doc)
    parser.add_argument("--rounds", type=int, default=3000)
    args = parser.parse_args(argv)
    text = json.dumps(asyncio.run(run(args.rounds)), indent=2)
    results.write_text(text + "\n")
    print(text)

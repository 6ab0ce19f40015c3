"""`python -m bench.calltime`: where a request's time goes, store call by store call.

Runs one operation on keygraph and on its naive baseline in this process, over a store whose
calls are timed as they are made (concurrently where the resolvers make them so). For each
variant it reports the request's median time and, per kind of call, how many a request
makes and how long at least one of them was in flight (calls in flight together count
once), as medians.

From these it reports the most batching can gain on the operation: the naive request's time
over the time the batched request spends waiting for its Queries. DynamoDB has no batched form of
Query, so those calls stay one per parent however the rest is batched; the speed-up cannot
exceed that ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bench.asgi import AsgiClient
from bench.dataset import TENANTS, load_dataset
from bench.floor_data import load_floor_data
from bench.inprocess import execute
from bench.queries import Operation, operations
from bench.run import profile_for
from bench.stats import median
from bench.stores import store_environment
from bench.targets import (
    StoreName,
    Variant,
    auth_headers,
    bench_settings,
    keygraph_app,
    open_store,
)
from keygraph.store import Store
from keygraph.stores.view import Planned, StoreView
from server.serving.datastack import run_with_headroom

R = TypeVar("R")
VARIANTS: tuple[Variant, ...] = ("keygraph", "naive")


class TimedStore(StoreView):
    """Forwards every call to `inner`, recording each call's kind, start and end."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.calls: list[tuple[str, float, float]] = []

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        started = time.perf_counter()
        try:
            return await call()
        finally:
            self.calls.append((kind, started, time.perf_counter()))


def busy(spans: Sequence[tuple[float, float]]) -> float:
    """How long at least one of the (start, end) spans was under way."""
    total = 0.0
    reached = float("-inf")
    for start, end in sorted(spans):
        if end > reached:
            total += end - max(start, reached)
            reached = end
    return total


def _by_kind(calls: Sequence[tuple[str, float, float]]) -> dict[str, tuple[int, float]]:
    """Calls of each kind and the seconds during which one was in flight."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for kind, start, end in calls:
        spans.setdefault(kind, []).append((start, end))
    return {kind: (len(taken), busy(taken)) for kind, taken in spans.items()}


async def measure(
    stores: dict[Variant, TimedStore],
    clients: dict[Variant, AsgiClient],
    op: Operation,
    repeats: int,
) -> dict[str, Any]:
    """Each variant's request time and, by kind of call, the calls and the time they were in
    flight: medians over `repeats` requests, the variants' requests interleaved."""
    for client in clients.values():
        await execute(client, op)  # warm-up
    requests: dict[str, list[float]] = {name: [] for name in clients}
    kinds: dict[str, list[dict[str, tuple[int, float]]]] = {name: [] for name in clients}
    for _ in range(repeats):
        for name, client in clients.items():
            stores[name].calls.clear()
            started = time.perf_counter()
            await execute(client, op)
            requests[name].append(time.perf_counter() - started)
            kinds[name].append(_by_kind(stores[name].calls))
    result: dict[str, Any] = {}
    for name in clients:
        names = sorted({kind for sample in kinds[name] for kind in sample})
        result[name] = {
            "request_ms": median(requests[name]) * 1000,
            "calls": {
                kind: {
                    "count": median([sample.get(kind, (0, 0.0))[0] for sample in kinds[name]]),
                    "ms": median([sample.get(kind, (0, 0.0))[1] for sample in kinds[name]]) * 1000,
                }
                for kind in names
            },
        }
    batched, naive = result["keygraph"], result["naive"]
    queries_ms = batched["calls"].get("Query", {"ms": 0.0})["ms"]
    result["speedup"] = naive["request_ms"] / batched["request_ms"]
    result["ceiling"] = naive["request_ms"] / queries_ms if queries_ms else None
    return result


def render(op: Operation, store: StoreName, result: dict[str, Any]) -> str:
    lines = [
        f"{op.name} ({op.title}) on {store}; ms: while a call of the kind was in flight",
        "",
        "| variant | request ms | call | calls | in flight ms |",
        "|---|---|---|---|---|",
    ]
    for name in VARIANTS:
        block = result[name]
        for index, (kind, call) in enumerate(block["calls"].items()):
            request = f"{block['request_ms']:,.1f}" if index == 0 else ""
            lines.append(
                f"| {name if index == 0 else ''} | {request} | {kind} | {call['count']:g} "
                f"| {call['ms']:,.1f} |"
            )
    lines.append("")
    lines.append(f"naive → batched: {result['speedup']:.2f}x")
    if result["ceiling"] is not None:
        lines.append(
            f"at most (naive ÷ the batched request's time in Queries): {result['ceiling']:.2f}x"
        )
    return "\n".join(lines)


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.calltime",
        description=__doc__.split(": ", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--store",
        choices=("embedded", "dynamodb-local"),
        default="dynamodb-local",
        help="the store to measure on (default: dynamodb-local, started by the harness)",
    )
    parser.add_argument(
        "--op", default="Q3", help="an operation with a naive baseline, Q2-Q5 (default: Q3)"
    )
    parser.add_argument("--repeats", type=int, default=5, help="requests per variant (default: 5)")
    parser.add_argument("--quick", action="store_true", help="the small dataset")
    parser.add_argument("--out", type=Path, default=None, help="also write the results JSON")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _parse(sys.argv[1:] if argv is None else argv)
    store_name: StoreName = args.store
    tenant = TENANTS[0]
    dataset = load_dataset(profile_for(store_name, args.quick))
    ops = {op.name: op for op in operations(load_floor_data(dataset.items[tenant], tenant))}
    op = ops.get(args.op)
    if op is None or not op.naive:
        with_naive = ", ".join(name for name, known in ops.items() if known.naive)
        raise SystemExit(f"--op must be one of {with_naive}, not {args.op!r}")
    with (
        tempfile.TemporaryDirectory(prefix="keygraph-calltime-") as tmp,
        store_environment(store_name, dataset, Path(tmp), progress=True) as (data_dir, endpoint),
    ):
        settings = bench_settings(data_dir, store_name, endpoint)
        headers = auth_headers(settings, tenant)

        async def run() -> dict[str, Any]:
            inner = open_store(settings)
            stores = {name: TimedStore(inner) for name in VARIANTS}
            clients = {
                name: AsgiClient(keygraph_app(settings, stores[name], name), headers)
                for name in VARIANTS
            }
            try:
                return await measure(stores, clients, op, args.repeats)
            finally:
                await inner.close()

        result = run_with_headroom(lambda: asyncio.run(run()))
    print(render(op, store_name, result))
    if args.out is not None:
        args.out.write_text(json.dumps({"store": store_name, "op": op.name, **result}, indent=2))
    return result


if __name__ == "__main__":
    main()

"""`python -m bench.profile`: where one operation's time goes, per stage, on each executor.

Runs the operation in-process (no sockets) under cProfile, many times, and adds each
function's own time to the stage its module belongs to: the HTTP layer and Strawberry's
view, parse and validate (cached) with the cost estimate, planning, resolvers, the store
(the generated queries, the runtime and the store itself), execution and shaping of the
response, JSON serialization, and the event loop. Shares are of the profiled time; the
profiler's own cost weighs on small functions, so compare stages, not absolute times.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.asgi import AsgiClient
from bench.dataset import TENANTS, load_dataset
from bench.floor_data import load_floor_data
from bench.inprocess import execute
from bench.queries import operations
from bench.run import profile_for
from bench.stores import store_environment
from bench.targets import Variant, auth_headers, bench_settings, keygraph_app, open_store
from server.edge.gc_tuning import tune_for_serving
from server.serving.datastack import run_with_headroom

STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("serialize", ("orjson", "json/", "_json")),
    (
        "parse, validate, cost",
        (
            "graphql/language",
            "graphql/validation",
            "server/graphql/prepare",
            "server/graphql/cost",
            "server/graphql/limits",
            "graphql/utilities",
        ),
    ),
    (
        "plan",
        (
            "server/graphql/compiled/plan",
            "server/graphql/compiled/executor",
            "graphql/execution/collect_fields",
        ),
    ),
    (
        "store",
        (
            "keygraph/",
            "generated/",
            "sqlite3",
            "boto",
            "server/domain",
            "server/graphql/counting",
            "pydantic",
        ),
    ),
    (
        "resolvers",
        (
            "server/graphql/types",
            "server/graphql/resolvers",
            "server/graphql/loaders",
            "server/graphql/prefetch",
            "server/graphql/lookahead",
            "strawberry/dataloader",
            "server/graphql/context",
            "server/graphql/ids",
        ),
    ),
    (
        "execute, shape",
        (
            "server/graphql/compiled/run",
            "server/graphql/compiled/arguments",
            "server/graphql/compiled/inputs",
            "<keygraph fill>",
            "graphql/execution",
            "graphql/pyutils",
            "graphql/type",
            "strawberry/schema",
            "strawberry/types",
            "strawberry/extensions",
        ),
    ),
    (
        "HTTP, view",
        (
            "starlette",
            "strawberry/http",
            "strawberry/asgi",
            "server/edge",
            "bench/asgi",
            "cross_web",
            "keygraph/serve/budget",
            "strawberry/",
        ),
    ),
    ("event loop", ("asyncio/",)),
)
"""Stages by the path fragments of their modules, tried in order; the rest is "other"."""


BUILTINS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("store", ("pydantic", "sqlite3", "orjson.loads")),
    ("serialize", ("orjson.dumps",)),
)
"""Built-in functions (C code, no module path) by the fragments of their names."""


def stage_of(filename: str, function: str) -> str:
    """The stage of a profiled function; built-ins the others do not claim are "other"."""
    for stage, fragments in BUILTINS if filename == "~" else STAGES:
        if any(fragment in (function if filename == "~" else filename) for fragment in fragments):
            return stage
    return "other"


def stage_times(stats: pstats.Stats) -> dict[str, float]:
    """Seconds of own time per stage."""
    found: dict[str, float] = {}
    for (filename, _, function), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        stage = stage_of(filename, function)
        found[stage] = found.get(stage, 0.0) + own
    return found


async def _profile(client: AsgiClient, op: Any, requests: int) -> tuple[dict[str, float], float]:
    for _ in range(5):
        await execute(client, op)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(requests):
        await execute(client, op)
    profiler.disable()
    times = stage_times(pstats.Stats(profiler))
    return times, sum(times.values()) / requests


def render(op_name: str, results: dict[str, tuple[dict[str, float], float]]) -> str:
    names = list(results)
    stages = [stage for stage, _ in STAGES] + ["other"]
    lines = [
        f"{op_name}: share of profiled time per stage, and ms per request under the profiler",
        "",
        "| stage | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for stage in stages:
        cells = []
        for name in names:
            times, per_request = results[name]
            total = sum(times.values())
            share = times.get(stage, 0.0) / total if total else 0.0
            cells.append(f"{share:.0%} ({per_request * share * 1000:.2f} ms)")
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    totals = " | ".join(f"{results[name][1] * 1000:.2f} ms" for name in names)
    lines.append(f"| total | {totals} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> str:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument("--op", default="Q3", help="the operation (default: Q3)")
    parser.add_argument("--requests", type=int, default=200, help="profiled requests (200)")
    parser.add_argument("--quick", action="store_true", help="the small dataset")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    tenant = TENANTS[0]
    dataset = load_dataset(profile_for("embedded", args.quick))
    ops = {op.name: op for op in operations(load_floor_data(dataset.items[tenant], tenant))}
    if args.op not in ops:
        parser.error(f"--op must be one of {', '.join(ops)}")
    op = ops[args.op]
    with (
        tempfile.TemporaryDirectory(prefix="keygraph-profile-") as tmp,
        store_environment("embedded", dataset, Path(tmp), progress=True) as (data_dir, endpoint),
    ):
        settings = bench_settings(data_dir, "embedded", endpoint)
        headers = auth_headers(settings, tenant)

        async def run() -> dict[str, tuple[dict[str, float], float]]:
            variants: tuple[Variant, ...] = ("keygraph", "strawberry")
            clients = {
                variant: AsgiClient(keygraph_app(settings, open_store(settings), variant), headers)
                for variant in variants
            }
            # the dataset and apps frozen, as a served app's heap is (see bench/measure.py)
            tune_for_serving()
            found: dict[str, tuple[dict[str, float], float]] = {}
            for variant, client in clients.items():
                found["compiled" if variant == "keygraph" else variant] = await _profile(
                    client, op, args.requests
                )
            return found

        table = render(op.name, run_with_headroom(lambda: asyncio.run(run())))
    print(table)
    return table


if __name__ == "__main__":
    main()

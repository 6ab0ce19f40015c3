"""Side-by-side measurement of keygraph, its API on graphql-core and the floor on one store:
store calls and waves, then timed runs in-process and over HTTP, repeated and interleaved
(every repeat runs every operation on every variant) so each ratio is taken within a repeat.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.asgi import AsgiClient
from bench.floor_data import Item
from bench.inprocess import execute, store_counts, timed_runs
from bench.overhttp import ServerProcess, Servers, run_loadgen
from bench.queries import Operation
from bench.stats import RunSummary, cpu_per_request, median_of, median_ratio
from bench.targets import VARIANTS, Variant, floor_app, keygraph_app, open_store
from keygraph.serve.gc_tuning import tune_for_serving
from server.settings import Settings


@dataclass(frozen=True, slots=True)
class Budget:
    """How long each timed run lasts: whichever of time and request count ends first."""

    repeats: int
    duration_s: float
    max_requests: int
    concurrency: int = 1
    warmup_requests: int = 3
    min_requests: int = 1
    """In-process runs go on past their time until they have this many requests."""

    def to_json(self) -> dict[str, Any]:
        return {
            "repeats": self.repeats,
            "duration_s": self.duration_s,
            "max_requests": self.max_requests,
            "concurrency": self.concurrency,
            "min_requests": self.min_requests,
        }


Runs = dict[tuple[str, Variant], list[RunSummary]]


def aggregate(ops: list[Operation], runs: Runs) -> dict[str, dict[str, Any]]:
    """Per operation: each variant's medians, keygraph ÷ floor, keygraph ÷ graphql-core and
    graphql-core ÷ floor (medians of the per-repeat ratios of requests per second) and,
    where the server's CPU was read, how many times less of it keygraph spends per request
    than graphql-core and the floor (`cpu_vs_graphql_core`, `cpu_vs_floor`)."""
    blocks: dict[str, dict[str, Any]] = {}
    for op in ops:
        rps = {variant: [run.rps for run in runs[(op.name, variant)]] for variant in VARIANTS}
        block: dict[str, Any] = {
            variant: median_of(runs[(op.name, variant)]).to_json() for variant in VARIANTS
        }
        block["vs_floor"] = median_ratio(rps["keygraph"], rps["floor"])
        block["vs_graphql_core"] = median_ratio(rps["keygraph"], rps["graphql-core"])
        block["graphql_core_vs_floor"] = median_ratio(rps["graphql-core"], rps["floor"])
        kg_cpu = cpu_per_request(runs[(op.name, "keygraph")])
        for other in ("graphql-core", "floor"):
            other_cpu = cpu_per_request(runs[(op.name, other)])
            if kg_cpu is not None and other_cpu is not None:
                block[f"cpu_vs_{other.replace('-', '_')}"] = median_ratio(other_cpu, kg_cpu)
        blocks[op.name] = block
    return blocks


def same_data(left: Any, right: Any) -> bool:
    """Equal JSON values, floats compared to 1e-9 relative (distances computed in another
    order may differ in the last bit)."""
    if isinstance(left, float) or isinstance(right, float):
        return (
            isinstance(left, int | float)
            and isinstance(right, int | float)
            and math.isclose(left, right, rel_tol=1e-9)
        )
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same_data(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            same_data(a, b) for a, b in zip(left, right, strict=True)
        )
    return bool(left == right)


async def measure_inprocess(
    settings: Settings,
    headers: dict[str, str],
    floor_items: Sequence[Item],
    tenant: str,
    ops: list[Operation],
    budget: Budget,
) -> dict[str, Any]:
    """Counts, the floor check and timed runs of every variant inside this process."""
    store = open_store(settings)
    apps = {
        "keygraph": keygraph_app(settings, store, "keygraph"),
        "graphql-core": keygraph_app(settings, store, "graphql-core"),
        "floor": floor_app(floor_items, tenant),
    }
    # The dataset, the floor's dicts and the apps live through the run: frozen, they are not
    # rescanned by every full collection, which would tax each variant by the harness's data;
    # the collector runs as a served app's does (lifespans do not run in-process).
    tune_for_serving()
    clients = {name: AsgiClient(app, headers) for name, app in apps.items()}
    try:
        # Compared first, before any write reaches one side only (M1 runs on both).
        matches = {
            op.name: same_data(
                (await execute(clients["keygraph"], op))["data"],
                (await execute(clients["floor"], op))["data"],
            )
            for op in ops
        }
        counts = {op.name: {"keygraph": await store_counts(clients["keygraph"], op)} for op in ops}
        for op in ops:
            for variant in VARIANTS:
                for _ in range(budget.warmup_requests):
                    await execute(clients[variant], op)
        runs: Runs = {}
        for _ in range(budget.repeats):
            for op in ops:
                taken = await timed_runs(
                    {variant: clients[variant] for variant in VARIANTS},
                    op,
                    budget.duration_s,
                    budget.max_requests,
                    budget.min_requests,
                )
                for variant, run in taken.items():
                    runs.setdefault((op.name, variant), []).append(run)
    finally:
        await store.close()
    return {"counts": counts, "matches_floor": matches, "results": aggregate(ops, runs)}


def measure_http(
    server_args: dict[Variant, list[str]],
    headers: dict[str, str],
    ops: list[Operation],
    budget: Budget,
    log_dir: Path,
) -> dict[str, Any]:
    """Timed runs of every variant, each served by its own uvicorn process and loaded from
    a load-generator process; and each server's peak RSS over the whole run."""
    servers = Servers([ServerProcess(name, args, log_dir) for name, args in server_args.items()])
    runs: Runs = {}
    first_errors: dict[str, str] = {}
    with servers as running:
        for repeat in range(budget.repeats):
            for op in ops:
                for variant in VARIANTS:
                    run, first_error = run_loadgen(
                        running[variant],
                        op,
                        headers,
                        budget.concurrency,
                        budget.duration_s,
                        budget.max_requests,
                        warmup=budget.warmup_requests if repeat == 0 else 0,
                    )
                    runs.setdefault((op.name, variant), []).append(run)
                    if first_error is not None:
                        first_errors.setdefault(f"{op.name}/{variant}", first_error)
    rss = {name: server.peak_rss_mib for name, server in servers.servers.items()}
    return {"results": aggregate(ops, runs), "peak_rss_mib": rss, "first_errors": first_errors}

"""`python -m bench`: build or reuse the dataset, measure every store, write the results
JSON and (full runs) the table in bench/README.md."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import harness
from bench.dataset import TENANTS, Dataset, Profile, load_dataset
from bench.floor_data import load_floor_data
from bench.machine import machine_info
from bench.measure import Budget, measure_http, measure_inprocess
from bench.queries import Operation, operations
from bench.report import render, update_readme
from bench.stores import store_environment
from bench.targets import StoreName, Variant, auth_headers, bench_settings
from server.serving.datastack import run_with_headroom

BENCH_DIR = Path(__file__).resolve().parent
STORES: tuple[StoreName, ...] = ("embedded", "dynamodb-local")
README = BENCH_DIR / "README.md"

FULL_BUDGETS = {
    "inprocess": Budget(repeats=5, duration_s=2.0, max_requests=3000, min_requests=3),
    "http": Budget(repeats=7, duration_s=1.5, max_requests=30_000, concurrency=4),
}
"""Sized for a shared 2-core machine and the embedded store. Over HTTP, many short runs: the
servers are loaded in turn, and a server's CPU time for the same request swung 3x between
runs a few seconds apart here, so the more pairs of neighbouring runs, the steadier the
median of their ratios."""
LOCAL_BUDGETS = {
    "inprocess": Budget(repeats=3, duration_s=2.0, max_requests=3000, min_requests=2),
    "http": Budget(
        repeats=2, duration_s=3.0, max_requests=30_000, concurrency=8, warmup_requests=1
    ),
}
"""DynamoDB Local answers a call in tens of milliseconds here, one call at a time: fewer
repeats and warm-up requests."""
QUICK_BUDGETS = {
    "inprocess": Budget(repeats=1, duration_s=0.05, max_requests=10, warmup_requests=0),
    "http": Budget(repeats=1, duration_s=0.1, max_requests=50, concurrency=2, warmup_requests=1),
}


def _server_args(
    store: StoreName, data_dir: Path, endpoint: str | None, items: Path
) -> dict[Variant, list[str]]:
    common = ["--store", store, "--data-dir", str(data_dir)]
    if endpoint is not None:
        common += ["--endpoint", endpoint]
    return {
        "keygraph": ["--target", "keygraph", *common],
        "graphql-core": ["--target", "graphql-core", *common],
        "floor": ["--target", "floor", "--items", str(items)],
    }


def run_store(
    store: StoreName,
    dataset: Dataset,
    ops: list[Operation],
    budgets: dict[str, Budget],
    work: Path,
    quick: bool,
    http: bool,
) -> dict[str, Any]:
    tenant = TENANTS[0]
    with store_environment(store, dataset, work, progress=not quick) as (data_dir, endpoint):
        settings = bench_settings(data_dir, store, endpoint)
        headers = auth_headers(settings, tenant)
        print(f"[bench] {store}: in-process", file=sys.stderr)
        inproc = run_with_headroom(  # the servers share this process's data stack
            lambda: asyncio.run(
                measure_inprocess(
                    settings, headers, dataset.items[tenant], tenant, ops, budgets["inprocess"]
                )
            )
        )
        over_http: dict[str, Any] = {"results": {}, "peak_rss_mib": {}, "first_errors": {}}
        if http:
            print(f"[bench] {store}: over HTTP", file=sys.stderr)
            over_http = measure_http(
                _server_args(store, data_dir, endpoint, dataset.items_file),
                headers,
                ops,
                budgets["http"],
                work,
            )
    return {
        "operations": {
            op.name: {
                "title": op.title,
                "levels": op.levels,
                "variables": op.variables,
                "counts": inproc["counts"][op.name],
                "matches_floor": inproc["matches_floor"][op.name],
                "inprocess": inproc["results"][op.name],
                "http": over_http["results"].get(op.name),
            }
            for op in ops
        },
        "peak_rss_mib": over_http["peak_rss_mib"],
        "first_errors": over_http["first_errors"],
    }


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = harness.parser("queries", __doc__)
    parser.add_argument("--quick", action="store_true", help="small data, short runs")
    parser.add_argument("--store", choices=("embedded", "dynamodb-local", "both"), default="both")
    parser.add_argument("--out", type=Path, default=None, help="results JSON path")
    parser.add_argument("--no-http", action="store_true", help="in-process measures only")
    parser.add_argument(
        "--rebuild", action="store_true", help="seed the cached dataset afresh (minutes)"
    )
    parser.add_argument(
        "--no-readme", action="store_true", help="leave bench/README.md alone (full runs)"
    )
    return parser.parse_args(argv)


def describe(dataset: Dataset) -> dict[str, Any]:
    sizes = dataset.sizes
    return {
        "tenants": len(TENANTS),
        "sizes": {
            "users": sizes.users,
            "orders": sizes.orders,
            "groups": sizes.groups,
            "max members": sizes.max_members,
            "org nodes": sizes.org_nodes,
            "org depth": sizes.org_depth,
            "shops": sizes.shops,
        },
        "rng_seed": dataset.rng_seed,
        "key": dataset.key,
    }


def budgets_for(store: StoreName, quick: bool) -> dict[str, Budget]:
    if quick:
        return QUICK_BUDGETS
    return FULL_BUDGETS if store == "embedded" else LOCAL_BUDGETS


def profile_for(store: StoreName, quick: bool) -> Profile:
    if quick:
        return "quick"
    return "full" if store == "embedded" else "dynamodb-local"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _parse(sys.argv[1:] if argv is None else argv)
    out: Path = args.out or BENCH_DIR / "results" / ("quick.json" if args.quick else "latest.json")
    stores: list[StoreName] = list(STORES) if args.store == "both" else [args.store]
    results: dict[str, Any] = {
        "machine": machine_info(),
        "mode": "quick" if args.quick else "full",
        "stores": {},
    }
    earlier = carried_over(results, out)
    tenant = TENANTS[0]
    with tempfile.TemporaryDirectory(prefix="keygraph-bench-") as tmp:
        for store in stores:
            dataset = load_dataset(profile_for(store, args.quick), args.rebuild)
            ops = operations(load_floor_data(dataset.items[tenant], tenant))
            budgets = budgets_for(store, args.quick)
            block = run_store(store, dataset, ops, budgets, Path(tmp), args.quick, not args.no_http)
            results["stores"][store] = {
                "dataset": describe(dataset),
                "budgets": {name: budget.to_json() for name, budget in budgets.items()},
                **block,
            }
            measured = {**earlier, **results["stores"]}
            ordered = {name: measured[name] for name in STORES if name in measured}
            table = record(
                {**results, "stores": ordered},
                out,
                readme=not args.quick and not args.no_readme,
            )
    print(table)
    return results


def carried_over(results: dict[str, Any], out: Path) -> dict[str, Any]:
    """The stores of an earlier full run in `out` that this run does not measure, each with
    the machine and date it was measured on: a run of one store keeps the other's results."""
    if results["mode"] != "full" or not out.is_file():
        return {}
    earlier: dict[str, Any] = json.loads(out.read_text())
    if earlier.get("mode") != "full":
        return {}
    return {
        store: {"machine": earlier["machine"], **block}
        for store, block in earlier.get("stores", {}).items()
        if store not in results["stores"]
    }


def record(results: dict[str, Any], out: Path, readme: bool) -> str:
    """Write the results so far (after each store, so a long run keeps what it measured)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    table = render(results)
    if readme:
        update_readme(README, table)
    return table

"""`python -m bench.stacks`: the same keygraph app under each HTTP stack of bench.serve, side
by side: one server process per stack, loaded in turn by one load generator (closed loop),
round after round, on the bench's data. Per operation and stack: the medians of req/s, p50
and the server's CPU per request (read from /proc around each run), and each stack's CPU
ratio to uvicorn on h11 taken within a round. Writes bench/results/stacks-<store>.json.

`python -m bench.stacks [--store S] [--ops Q1,Q3] [--rounds N] [--seconds S] [--concurrency C]`
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.dataset import TENANTS, load_dataset
from bench.floor_data import load_floor_data
from bench.machine import machine_info
from bench.overhttp import ServerProcess, Servers, run_loadgen
from bench.queries import operations
from bench.run import profile_for
from bench.serve import STACKS
from bench.stats import RunSummary, cpu_per_request, median_of, median_ratio
from bench.stores import store_environment
from bench.targets import StoreName, auth_headers, bench_settings

RESULTS = Path(__file__).with_name("results")
BASELINE = "uvicorn-h11"


def summarize_stacks(runs: dict[str, list[RunSummary]]) -> dict[str, Any]:
    """Each stack's medians and its CPU per request as a share of the baseline's, the median
    of the ratios of runs in the same round."""
    base = cpu_per_request(runs[BASELINE])
    found: dict[str, Any] = {}
    for stack, taken in runs.items():
        cpu = cpu_per_request(taken)
        found[stack] = {
            **median_of(taken).to_json(),
            "cpu_of_baseline": median_ratio(cpu, base) if cpu and base else None,
        }
    return found


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.stacks", description=__doc__)
    parser.add_argument("--store", choices=("embedded", "dynamodb-local"), default="embedded")
    parser.add_argument("--ops", default="Q1,Q3", help="comma-separated (Q1,Q3)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="per run (2)")
    parser.add_argument("--concurrency", type=int, default=1, help="(1: sequential)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    store: StoreName = args.store
    tenant = TENANTS[0]
    dataset = load_dataset(profile_for(store, False))
    wanted = args.ops.split(",")
    ops = [
        op for op in operations(load_floor_data(dataset.items[tenant], tenant)) if op.name in wanted
    ]
    runs: dict[str, dict[str, list[RunSummary]]] = {op.name: {} for op in ops}
    with (
        tempfile.TemporaryDirectory(prefix="keygraph-stacks-") as tmp,
        store_environment(store, dataset, Path(tmp), progress=True) as (data, endpoint),
    ):
        settings = bench_settings(data, store, endpoint)
        headers = auth_headers(settings, tenant)
        common = ["--target", "keygraph", "--store", store, "--data-dir", str(data)]
        if endpoint is not None:
            common += ["--endpoint", endpoint]
        servers = [ServerProcess(s, [*common, "--stack", s], Path(tmp)) for s in STACKS]
        with Servers(servers) as running:
            for round_ in range(args.rounds):
                for op in ops:
                    for stack in STACKS:
                        summary, error = run_loadgen(
                            running[stack],
                            op,
                            headers,
                            args.concurrency,
                            args.seconds,
                            10**9,
                            warmup=20 if round_ == 0 else 0,
                        )
                        if error is not None:
                            raise RuntimeError(f"{stack} failed {op.name}: {error}")
                        runs[op.name].setdefault(stack, []).append(summary)
                        print(
                            f"{op.name} {stack}: {summary.rps:.0f} req/s, p50"
                            f" {summary.p50_ms:.2f} ms, CPU {summary.cpu_ms:.3f} ms/req",
                            file=sys.stderr,
                            flush=True,
                        )
    results = {
        "machine": machine_info(),
        "store": store,
        "concurrency": args.concurrency,
        "rounds": args.rounds,
        "seconds": args.seconds,
        "operations": {name: summarize_stacks(taken) for name, taken in runs.items()},
    }
    out = RESULTS / f"stacks-{store}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results["operations"], indent=2))
    return results


if __name__ == "__main__":
    main()

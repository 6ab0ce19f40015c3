"""Two timed HTTP runs of one operation against the checkout it runs in (bench/versus.py
starts it with that checkout as its working directory and import path): only benchmark
modules every checkout since 2026-11-22 has are used. Prints the runs as JSON."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, cast

from bench.dataset import TENANTS, load_dataset
from bench.floor_data import load_floor_data
from bench.overhttp import ServerProcess, Servers, run_loadgen
from bench.queries import operations
from bench.run import profile_for
from bench.stores import store_environment
from bench.targets import auth_headers, bench_settings

if TYPE_CHECKING:
    from bench.targets import StoreName


def main() -> None:
    op_name, concurrency, seconds = sys.argv[1], sys.argv[3], sys.argv[4]
    store = cast("StoreName", sys.argv[2])
    tenant = TENANTS[0]
    dataset = load_dataset(profile_for(store, False))
    ops = {op.name: op for op in operations(load_floor_data(dataset.items[tenant], tenant))}
    with (
        tempfile.TemporaryDirectory() as tmp,
        store_environment(store, dataset, Path(tmp), progress=False) as (data, endpoint),
    ):
        settings = bench_settings(data, store, endpoint)
        args = ["--target", "keygraph", "--store", store, "--data-dir", str(data)]
        if endpoint is not None:
            args += ["--endpoint", endpoint]
        runs = []
        with Servers([ServerProcess("keygraph", args, Path(tmp))]) as running:
            for _ in range(2):
                summary, _error = run_loadgen(
                    running["keygraph"],
                    ops[op_name],
                    auth_headers(settings, tenant),
                    int(concurrency),
                    float(seconds),
                    1_000_000,
                    20,
                )
                runs.append({"p50": summary.p50_ms, "rps": summary.rps, "errors": summary.errors})
    print(json.dumps(runs))


if __name__ == "__main__":
    main()

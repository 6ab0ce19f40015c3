"""`python -m bench peer`: keygraph against the peer (Strawberry + PynamoDB with DataLoaders)
on one DynamoDB Local holding the bench's dynamodb-local dataset, over HTTP; prints the
table of bench/README's "Against the peer" and writes the results as JSON to
bench/results/peer-dynamodb-local.json."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import harness
from bench.dataset import TENANTS, load_dataset
from bench.floor_data import load_floor_data
from bench.overhttp import ROOT
from bench.peer.versus import Load, compare, table
from bench.queries import operations
from bench.stores import store_environment
from bench.targets import auth_headers, bench_settings

OUT = ROOT / "bench" / "results" / "peer-dynamodb-local.json"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = harness.parser("peer", __doc__)
    parser.add_argument("--ops", default="Q1,Q2,Q3", help="(Q1,Q2,Q3)")
    parser.add_argument("--rounds", type=int, default=Load.rounds, help="(%(default)s)")
    parser.add_argument("--seconds", type=float, default=Load.seconds, help="a run (%(default)s)")
    parser.add_argument("--concurrency", type=int, default=Load.concurrency, help="(%(default)s)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    load = Load(rounds=args.rounds, seconds=args.seconds, concurrency=args.concurrency)
    tenant = TENANTS[0]
    dataset = load_dataset("dynamodb-local")
    names = args.ops.split(",")
    ops = [
        op for op in operations(load_floor_data(dataset.items[tenant], tenant)) if op.name in names
    ]
    with (
        tempfile.TemporaryDirectory() as tmp,
        store_environment("dynamodb-local", dataset, Path(tmp), progress=True) as (
            data_dir,
            endpoint,
        ),
    ):
        if endpoint is None:
            raise RuntimeError("DynamoDB Local did not start")
        headers = auth_headers(bench_settings(data_dir, "dynamodb-local", endpoint), tenant)
        results = compare(endpoint, data_dir, headers, ops, load, Path(tmp))
    print(table(results))
    OUT.write_text(json.dumps(results, indent=2) + "\n")
    return results

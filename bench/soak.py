"""The soak run: `python -m server serve` (the compiled API) under mixed reads and writes at a
fixed concurrency for minutes, on the embedded store or DynamoDB Local.

Each minute it reports the answers, errors, p50/p99 latency and the server's memory (RSS and
its anonymous part apart: the embedded store's SQLite file is memory-mapped, so RSS grows
with the data read while anonymous memory is the process's own). Every write the server
acknowledged is remembered and read back at the end; one that does not read back as
acknowledged is lost. `python -m bench soak --help` for the flags.

With `--faults` (DynamoDB Local only) the server reaches DynamoDB Local through a
fault-injecting proxy (testkit.faults) that throttles 5% of the data-plane
calls and resets the connection on 1% (half before DynamoDB runs the call, half after): the
answers' codes are counted (no INTERNAL is the goal), and the acknowledged writes are read
back with the faults off.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import harness
from bench.loadgen import HOST
from bench.machine import machine_info, memory_kib
from bench.processes import start, stop, wait_answering
from bench.soak_faults import DATA_PLANE, FAULTS, faults_seen, faulty_local
from bench.soak_load import SECRET, TENANT, WRITE_SHARE, Minute, Soak
from bench.stats import percentile
from generated.table import TABLE
from keygraph.stores.dynamodb.local import (
    LOCAL_KEY_ID,
    LOCAL_REGION,
    LOCAL_SECRET,
    free_port,
)
from server.auth.tokens import issue_token
from server.settings import Settings
from testkit.faults import (
    FaultProxy,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).with_name("results")


def run(
    store: str, minutes: float, concurrency: int, data: Path, faults: bool = False
) -> dict[str, Any]:
    if faults and store != "dynamodb-local":
        raise ValueError("faults are injected in front of DynamoDB Local only")
    with contextlib.ExitStack() as stack:
        proxy = stack.enter_context(faulty_local(data)) if faults else None
        return _run(store, minutes, concurrency, data, proxy)


def _run(
    store: str, minutes: float, concurrency: int, data: Path, proxy: FaultProxy | None
) -> dict[str, Any]:
    port = free_port()
    env = {
        **os.environ,
        "KEYGRAPH_JWT_SECRET": SECRET,
        "KEYGRAPH_TENANT_BUDGET": str(10**12),  # one tenant sends everything: no throttling
        "KEYGRAPH_TENANT_REFILL": str(10**12),
    }
    served = store
    if proxy is not None:
        served = "dynamodb"  # at the proxy's endpoint
        env.update(
            KEYGRAPH_DYNAMODB_ENDPOINT=proxy.url,
            KEYGRAPH_TABLE=TABLE.name,
            KEYGRAPH_REGION=LOCAL_REGION,
            AWS_ACCESS_KEY_ID=LOCAL_KEY_ID,
            AWS_SECRET_ACCESS_KEY=LOCAL_SECRET,
        )
    command = [sys.executable, "-m", "server", "serve", "--demo", "--store", served]
    command += ["--port", str(port), "--data", str(data)]
    server = start(command, env)
    try:
        wait_answering(f"http://{HOST}:{port}/readyz", server, timeout=300)
        if proxy is not None:
            for fault, share in FAULTS:
                proxy.add(fault, operations=DATA_PLANE, probability=share)
        token = issue_token(
            Settings(data_dir=data, jwt_secret=SECRET), TENANT, "soak", roles=["admin"]
        )
        soak = Soak(port, token, concurrency, seed=20261124)
        rows: list[dict[str, Any]] = []

        def sample(minute: Minute) -> None:
            ordered = sorted(minute.latencies)
            row = {
                "minute": len(rows) + 1,
                "answers": minute.answers,
                "errors": minute.errors,
                "p50_ms": round(percentile(ordered, 0.5) * 1000, 1) if ordered else None,
                "p99_ms": round(percentile(ordered, 0.99) * 1000, 1) if ordered else None,
                "memory_kib": memory_kib(server.pid),
                "first_error": minute.first_error,
                "codes": dict(minute.codes),
            }
            rows.append(row)
            print(f"[soak] {store} {json.dumps(row)}", file=sys.stderr)

        asyncio.run(soak.run(minutes, sample))
        if proxy is not None:
            proxy.clear()
        lost = asyncio.run(soak.lost())
    finally:
        stop(server)
    warm, last = rows[0]["memory_kib"], rows[-1]["memory_kib"]
    codes: Counter[str] = Counter()
    for row in rows:
        codes.update(row["codes"])
    return {
        "store": store,
        "faults": None if proxy is None else faults_seen(proxy),
        "codes": dict(codes),
        "minutes": minutes,
        "concurrency": concurrency,
        "write_share": WRITE_SHARE,
        "per_minute": rows,
        "errors": sum(row["errors"] for row in rows),
        "answers": sum(row["answers"] for row in rows),
        "acknowledged_writes": soak.acknowledged.count(),
        "lost_writes": lost,
        "anon_growth_after_warmup": round(last["RssAnon"] / warm["RssAnon"] - 1, 4),
        "rss_growth_after_warmup": round(last["VmRSS"] / warm["VmRSS"] - 1, 4),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser("soak", __doc__)
    parser.add_argument("--store", choices=("embedded", "dynamodb-local"), default="embedded")
    parser.add_argument("--minutes", type=float, default=10.0, help="default 10")
    parser.add_argument("--concurrency", type=int, default=8, help="default 8 connections")
    parser.add_argument(
        "--faults",
        action="store_true",
        help="DynamoDB Local behind a proxy throttling 5%% of calls and resetting 1%%",
    )
    parser.add_argument("--out", type=Path, help="default bench/results/soak-<store>.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keygraph-soak-") as tmp:
        result = run(args.store, args.minutes, args.concurrency, Path(tmp), args.faults)
    result["machine"] = machine_info()
    name = f"soak-{args.store}" + ("-faults" if args.faults else "")
    out = args.out or RESULTS / f"{name}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    summary = {k: result[k] for k in ("errors", "answers", "acknowledged_writes", "codes")}
    print(
        json.dumps(
            {
                **summary,
                "lost": len(result["lost_writes"]),
                "anon_growth": result["anon_growth_after_warmup"],
            }
        )
    )

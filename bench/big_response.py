"""`python -m bench.big_response`: the memory a server takes to send one large response, on
each executor.

A tenant of 100 users with about 100 orders each (1-5 lines) is seeded into an embedded store;
one query asks for every user's 100 newest orders with their lines, a response of about
5 MB. For each executor, a fresh server process (`python -m server serve`, the cost limit
raised so the query is allowed) answers a small request (the idle baseline is its resident
set size then), has its peak resident set size reset (/proc/PID/clear_refs), then answers the
large query; the peak above the baseline is what sending the response took. Fresh processes
each run, medians of the runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.machine import peak_rss_mib, rss_mib
from bench.overhttp import HOST, ROOT, free_port
from generated.table import TABLE
from keygraph.stores.embedded.store import EmbeddedStore
from server.edge.auth import issue_token
from server.seed.tenant import SeedSizes, seed
from server.settings import load_settings

TENANT = "demo"
SIZES = SeedSizes(users=100, orders=10_000, groups=0, org_nodes=0, org_depth=1, shops=0)
LARGE = """{ users(first: 100) { edges { node { id email name createdAt
  orders(first: 100) { edges { cursor node { id status totalCents currency createdAt version
    items { sku name quantity unitPriceCents } } } } } } } }"""
SMALL = "{ viewer { tenant } }"


def _body(query: str) -> bytes:
    import json

    return json.dumps({"query": query}).encode()


def _send(port: int, token: str, query: str) -> bytes:
    request = urllib.request.Request(
        f"http://{HOST}:{port}/graphql",
        data=_body(query),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        body: bytes = response.read()
    return body


def _one_run(data_dir: Path, executor: str, token: str) -> dict[str, float]:
    port = free_port()
    env = {
        **os.environ,
        "KEYGRAPH_EXECUTOR": executor,
        "KEYGRAPH_MAX_COST": "1000000",
        "KEYGRAPH_TENANT_BUDGET": "1000000",
    }
    command = [sys.executable, "-m", "server", "serve", "--data", str(data_dir)]
    command += ["--port", str(port)]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _send(port, token, SMALL)
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"the {executor} server did not start") from None
                time.sleep(0.2)
        time.sleep(0.5)
        baseline = rss_mib(process.pid) or 0.0
        Path(f"/proc/{process.pid}/clear_refs").write_text("5")
        body = _send(port, token, LARGE)
        peak = peak_rss_mib(process.pid) or 0.0
    finally:
        process.terminate()
        process.wait(timeout=30)
    size = len(body) / 2**20
    return {"response_mib": size, "baseline_mib": baseline, "peak_above_mib": peak - baseline}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.big_response", description=__doc__)
    parser.add_argument("--runs", type=int, default=3, help="fresh servers per executor (3)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="keygraph-big-") as tmp:
        data_dir = Path(tmp)
        store = EmbeddedStore(data_dir / "keygraph.sqlite3", TABLE)

        async def fill() -> None:
            try:
                await seed(store, TENANT, SIZES, progress=False)
            finally:
                await store.close()

        asyncio.run(fill())
        token = issue_token(load_settings({}, data_dir=data_dir), TENANT, "bench")
        results: dict[str, Any] = {}
        for executor in ("compiled", "strawberry"):
            runs = [_one_run(data_dir, executor, token) for _ in range(args.runs)]
            results[executor] = {
                key: statistics.median(run[key] for run in runs) for key in runs[0]
            }
    for executor, found in results.items():
        size, idle, above = found["response_mib"], found["baseline_mib"], found["peak_above_mib"]
        print(
            f"{executor}: response {size:.2f} MiB, idle {idle:.0f} MiB, peak above idle"
            f" {above:.1f} MiB ({above / size:.1f}x the response)"
        )
    return results


if __name__ == "__main__":
    main()

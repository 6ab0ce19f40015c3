"""`python -m bench big-response`: the memory a server takes to send one large response, on
each executor of the compiled API (`compiled`, or `graphql-core`'s).

A tenant of 100 users with about 100 orders each (1-5 lines) is seeded into a store (the
embedded one, or DynamoDB Local with `--store dynamodb-local`); one query asks for every
user's 100 newest orders with their lines, a response of about 5 MB. For each executor, a
fresh server process (`python -m server serve`, the cost limit and budget raised so the
query is allowed) answers a small request (the idle baseline is its resident set size then), has its
peak resident set size reset (/proc/PID/clear_refs), then answers the large query; the peak
above the baseline is what sending the response took. Its anonymous (private) memory is
sampled every millisecond meanwhile: on the embedded store the resident set also counts the
pages of the database file that SQLite reads through a memory map, which are the kernel's
page cache. Fresh processes each run, medians of the runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import harness
from bench.machine import peak_rss_mib, rss_mib
from bench.overhttp import HOST, free_port
from bench.processes import start, stop, wait_answering
from generated.table import TABLE
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.seed.tenant import SeedSizes, seed
from server.serving.backends import open_backend
from server.settings import EXECUTOR_KINDS, load_settings

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


def _anon_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return 0.0


class _AnonPeak:
    """The highest anonymous resident memory of a process, sampled every millisecond."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, _anon_mib(pid), threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.001):
            with contextlib.suppress(OSError):
                self.peak = max(self.peak, _anon_mib(self.pid))

    def __enter__(self) -> _AnonPeak:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _one_run(data_dir: Path, store: str, executor: str, token: str) -> dict[str, float]:
    port = free_port()
    env = {
        **os.environ,
        "KEYGRAPH_STORE": store,
        "KEYGRAPH_EXECUTOR": executor,
        "KEYGRAPH_MAX_COST": "1000000",
        "KEYGRAPH_TENANT_BUDGET": "1000000",
        "KEYGRAPH_STREAM_COST": "1000",  # sent in parts, as an export would be
    }
    command = [sys.executable, "-m", "server", "serve", "--data", str(data_dir)]
    command += ["--port", str(port)]
    process = start(command, env)
    try:
        wait_answering(f"http://{HOST}:{port}/readyz", process, timeout=60)
        _send(port, token, SMALL)
        time.sleep(0.5)  # the first answer's garbage settled before the baseline
        baseline, anon = rss_mib(process.pid) or 0.0, _anon_mib(process.pid)
        Path(f"/proc/{process.pid}/clear_refs").write_text("5")
        with _AnonPeak(process.pid) as sampled:
            body = _send(port, token, LARGE)
        peak = peak_rss_mib(process.pid) or 0.0
    finally:
        stop(process)
    return {
        "response_mib": len(body) / 2**20,
        "baseline_mib": baseline,
        "peak_above_mib": peak - baseline,
        "anon_peak_above_mib": sampled.peak - anon,
    }


async def _seed(data_dir: Path, store: str) -> None:
    if store == "embedded":
        embedded = EmbeddedStore(TABLE, path=data_dir / "keygraph.sqlite3")
        try:
            await seed(embedded, TENANT, SIZES, progress=False)
        finally:
            await embedded.close()
        return
    with open_backend(load_settings({}, data_dir=data_dir, store=store)) as backend:
        try:
            await seed(backend.store, TENANT, SIZES, progress=False)
        finally:
            await backend.store.close()


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = harness.parser("big-response", __doc__)
    parser.add_argument("--runs", type=int, default=3, help="fresh servers per executor (3)")
    parser.add_argument(
        "--store", choices=("embedded", "dynamodb-local"), default="embedded", help="(embedded)"
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="keygraph-big-") as tmp:
        data_dir = Path(tmp)
        asyncio.run(_seed(data_dir, args.store))
        token = issue_token(load_settings({}, data_dir=data_dir), TENANT, "bench", roles=["admin"])
        results: dict[str, Any] = {}
        for executor in EXECUTOR_KINDS:
            runs = [_one_run(data_dir, args.store, executor, token) for _ in range(args.runs)]
            results[executor] = {
                key: statistics.median(run[key] for run in runs) for key in runs[0]
            }
    for shown, found in results.items():
        size, idle = found["response_mib"], found["baseline_mib"]
        above, anon = found["peak_above_mib"], found["anon_peak_above_mib"]
        print(
            f"{args.store}, {shown}: response {size:.2f} MiB, idle {idle:.0f} MiB; peak above"
            f" idle: resident {above:.1f} MiB ({above / size:.1f}x the response), anonymous"
            f" {anon:.1f} MiB ({anon / size:.1f}x)"
        )
    return results

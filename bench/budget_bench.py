"""A budget check's cost: a host's own bucket (keygraph/serve/budget.py) against the bucket
every host shares in Redis (keygraph/shared/bucket.py), in one process against a real
`redis-server` on loopback. Arms, alternating in batches: the local `take`; the shared
`admit` a request awaits before it runs (one script call); the shared `take` for work
under way (this holder's view, its points sent to Redis after, coalesced). Wall time per
check, medians over the batches. Writes bench/results/budget.json; bench/README.md records it.

    python -m bench budget [--rounds N] [--batch N]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench import harness
from bench.machine import machine_info
from keygraph.process import orphan_proof
from keygraph.serve.budget import TenantBudget
from keygraph.shared.bucket import SharedBudget
from keygraph.shared.link import Link
from keygraph.stores.dynamodb.local import free_port

RESULTS = Path(__file__).parent / "results" / "budget.json"
ENDLESS = 1e12
"""Capacity and refill that never refuse: the bench times the check, not refusals."""
TENANT = "acme"
COST = 10
Batch = Callable[[int], Awaitable[None]]
"""Makes `n` checks of one arm."""


@contextlib.contextmanager
def redis_server() -> Iterator[tuple[str, str, int]]:
    """The URL, version and pid of a redis-server without persistence on a free loopback
    port, once it answers; stopped at the end."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not on PATH: apt-get install redis-server")
    import redis
    from redis.exceptions import ConnectionError as Refused

    port = free_port()
    with tempfile.TemporaryDirectory(prefix="keygraph-bench-redis-") as directory:
        command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", directory]
        command += ["--save", "", "--appendonly", "no"]
        process = subprocess.Popen(
            orphan_proof(command), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            client = redis.Redis(port=port)
            deadline = time.monotonic() + 10
            while True:
                try:
                    client.ping()
                    break
                except Refused:
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise
                    time.sleep(0.01)
            info: dict[str, Any] = client.info("server")  # type: ignore[assignment]
            version = info["redis_version"]
            client.close()
            yield f"redis://127.0.0.1:{port}/0", str(version), process.pid
        finally:
            process.terminate()
            process.wait(timeout=10)


def _arms(local: TenantBudget, shared: SharedBudget) -> dict[str, Batch]:
    async def local_take(n: int) -> None:
        for _ in range(n):
            assert local.take(TENANT, COST).admitted

    async def shared_admit(n: int) -> None:
        for _ in range(n):
            assert (await shared.admit(TENANT, COST)).admitted

    async def shared_take(n: int) -> None:
        for _ in range(n):
            assert shared.take(TENANT, COST).admitted
        await shared.close()  # its points reach Redis within the batch's time

    return {"local_take": local_take, "shared_admit": shared_admit, "shared_take": shared_take}


async def _run(url: str, rounds: int, batch: int) -> dict[str, Any]:
    fell_back: list[str] = []
    link = Link(url, fell_back=fell_back.append)
    local = TenantBudget(ENDLESS, ENDLESS)
    shared = SharedBudget(link, "bench:", ENDLESS, ENDLESS, TenantBudget(1, 1))
    arms = _arms(local, shared)
    for arm in arms.values():
        await arm(batch)
    taken: dict[str, list[float]] = {name: [] for name in arms}
    for round_ in range(rounds):
        for name in list(arms) if round_ % 2 == 0 else list(reversed(arms)):
            started = time.perf_counter()
            await arms[name](batch)
            taken[name].append((time.perf_counter() - started) / batch)
    await link.close()
    if fell_back:
        raise RuntimeError(f"{len(fell_back)} checks fell back to the host's own bucket")
    result: dict[str, Any] = {"rounds": rounds, "batch": batch}
    for name, times in taken.items():
        result[f"{name}_p50_us"] = round(statistics.median(times) * 1e6, 2)
        result[f"{name}_mean_us"] = round(statistics.fmean(times) * 1e6, 2)
    for name in ("shared_admit", "shared_take"):
        result[f"{name}/local_take_p50"] = round(
            result[f"{name}_p50_us"] / result["local_take_p50_us"], 1
        )
    return {"machine": machine_info(), "results": result}


def main(argv: Sequence[str]) -> None:
    parser = harness.parser("budget", __doc__)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=50, help="checks timed together")
    args = parser.parse_args(argv)
    with redis_server() as (url, version, _):
        report = {"redis": version, **asyncio.run(_run(url, args.rounds, args.batch))}
    text = json.dumps(report, indent=2)
    RESULTS.write_text(text + "\n")
    print(text)

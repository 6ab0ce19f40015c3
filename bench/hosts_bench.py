"""Realtime past one host: four `python -m server serve --workers 2` processes (the compiled
API, each worker reading the change stream itself) over one embedded table (linked into each
host's data directory) and one `redis-server` (KEYGRAPH_REDIS_URL: the tenants' budgets
shared), with subscribers spread over every host (bench/ws_client.py) and writes made from
this process. Measures the latency from a write to each of its deliveries, the time until
events reach every other host's subscribers once one host is SIGKILLed, and Redis and
server CPU per event (from /proc/<pid>/stat). Writes bench/results/hosts.json.

    python -m bench hosts [--per-host N] [--writes N]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import harness
from bench.budget_bench import redis_server
from bench.machine import machine_info
from bench.processes import start, stop, wait_answering
from bench.queries import to_global_id
from bench.realtime_served import HOST, SECRET, SUBSCRIPTION, TENANT, USER, raise_fd_limit
from bench.stats import percentile
from bench.ws_client import Subscriber, subscriber
from generated.table import TABLE
from keygraph.plan import Put
from keygraph.store import Store
from keygraph.stores.dynamodb.local import free_port
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.settings import Settings

RESULTS = Path(__file__).parent / "results" / "hosts.json"
HOSTS = 4
CONNECTING = 32
TIMEOUT_S = 60.0
WARM_UPS, WARM_UP_S = 20, 5.0
GAP_S = 0.05
"""The longest random pause before a timed write, once the previous one reached everyone."""
PROBE_S = 0.1
"""Seconds between writes after the kill, until one reaches every surviving subscriber."""
TICK = os.sysconf("SC_CLK_TCK")
IDLE_S = 3.0
"""Seconds the idle CPU of Redis and the hosts (readers polling) is measured before the window."""


@dataclass
class Host:
    """One `serve` process and its port."""

    port: int
    process: subprocess.Popen[bytes]

    def pids(self) -> list[int]:
        """The serve process and its children (its workers)."""
        return [self.process.pid, *children(self.process.pid)]


def children(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                if int(stat.rpartition(")")[2].split()[1]) == parent:
                    found.append(int(entry.name))
    return found


def cpu_s(pids: Sequence[int]) -> float:
    """User and system CPU seconds the processes have run (fields 14 and 15 of /proc/<pid>/stat)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])
    return total / TICK


@contextlib.contextmanager
def hosts(table: Path, scratch: Path, redis_url: str, subscribers: int) -> Iterator[list[Host]]:
    """HOSTS serve processes over `table`, answering; stopped at the end."""
    env = {
        **os.environ,
        "KEYGRAPH_JWT_SECRET": SECRET,
        "KEYGRAPH_REDIS_URL": redis_url,
        "KEYGRAPH_TENANT_BUDGET": str(10**12),
        "KEYGRAPH_TENANT_REFILL": str(10**12),
        "KEYGRAPH_MAX_WS_CONNECTIONS_PER_TENANT": str(subscribers * 2),
    }
    started: list[Host] = []
    with contextlib.ExitStack() as logs:
        try:
            for n in range(HOSTS):
                data = scratch / f"host-{n}"
                data.mkdir()
                (data / "keygraph.sqlite3").symlink_to(table)
                port = free_port()
                command = [sys.executable, "-m", "server", "serve", "--port", str(port)]
                command += ["--data", str(data), "--workers", "2"]
                log = logs.enter_context((scratch / f"host-{n}.log").open("wb"))
                started.append(Host(port, start(command, env, log)))
            for host in started:
                wait_answering(f"http://{HOST}:{host.port}/readyz", host.process)
            yield started
        finally:
            for host in started:
                stop(host.process)


@dataclass
class Deliveries:
    """When each subscriber first got each write's event (by the name it set)."""

    times: dict[int, dict[int, float]] = field(default_factory=dict)
    wanted: dict[int, tuple[set[int], asyncio.Event]] = field(default_factory=dict)

    def expect(self, write: int, of: set[int]) -> asyncio.Event:
        done = asyncio.Event()
        self.wanted[write] = (of, done)
        self._check(write)
        return done

    def arrived(self, write: int, who: int, at: float) -> None:
        self.times.setdefault(write, {}).setdefault(who, at)
        self._check(write)

    def _check(self, write: int) -> None:
        if write in self.wanted:
            of, done = self.wanted[write]
            if of <= self.times.get(write, {}).keys():
                done.set()


async def _write(store: Store, n: int) -> float:
    changed = USER.model_copy(update={"name": f"n{n}", "version": n + 1})
    started = time.perf_counter()
    await store.put(Put(item=changed.to_item(TENANT)))
    return started


async def _subscribe(
    servers: list[Host], per_host: int, deliveries: Deliveries
) -> tuple[list[Subscriber], list[int]]:
    """per_host subscribers on every host; the host of each."""
    token = issue_token(Settings(jwt_secret=SECRET), TENANT, "bench", roles=["admin"])
    variables = {"id": to_global_id("User", USER.user_id)}
    gate = asyncio.Semaphore(CONNECTING)

    async def one(who: int, port: int) -> Subscriber:
        def on_next(payload: Any, at: float) -> None:
            deliveries.arrived(int(payload["data"]["userChanged"]["user"]["name"][1:]), who, at)

        async with gate:
            ws = await subscriber(HOST, port, on_next)
            await ws.subscribe(token, SUBSCRIPTION, variables)
            return ws

    where = [n % HOSTS for n in range(per_host * HOSTS)]
    sockets = await asyncio.gather(*(one(who, servers[h].port) for who, h in enumerate(where)))
    return list(sockets), where


async def _warm_up(store: Store, deliveries: Deliveries, everyone: set[int]) -> int:
    """Writes until one reaches every subscriber; the next write's number."""
    for n in range(1, WARM_UPS + 1):
        done = deliveries.expect(n, everyone)
        await _write(store, n)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), WARM_UP_S)
            return n + 1
    got = len(deliveries.times.get(WARM_UPS, {}))
    raise RuntimeError(f"{got} of {len(everyone)} subscribers got a warm-up write")


async def _timed(
    store: Store, deliveries: Deliveries, everyone: set[int], numbers: range
) -> tuple[list[float], list[float]]:
    """Milliseconds from each write to each of its deliveries, and to its last one."""
    jitter = random.Random(7)
    every: list[float] = []
    lasts: list[float] = []
    for n in numbers:
        await asyncio.sleep(jitter.uniform(0, GAP_S))
        done = deliveries.expect(n, everyone)
        started = await _write(store, n)
        await asyncio.wait_for(done.wait(), TIMEOUT_S)
        times = [(at - started) * 1000 for at in deliveries.times[n].values()]
        every.extend(times)
        lasts.append(max(times))
    return every, lasts


async def _failover(
    store: Store, servers: list[Host], deliveries: Deliveries, where: list[int], first: int
) -> dict[str, Any]:
    """SIGKILLs the first host, then writes every PROBE_S until a write made after the kill
    reaches every subscriber of the other hosts."""
    killed = 0
    for victim in [*children(servers[killed].process.pid), servers[killed].process.pid]:
        os.kill(victim, signal.SIGKILL)
    at = time.perf_counter()
    servers[killed].process.wait(timeout=30)
    survivors = {who for who, h in enumerate(where) if h != killed}
    waits: dict[int, asyncio.Event] = {}
    n = first
    while time.perf_counter() - at < TIMEOUT_S:
        waits[n] = deliveries.expect(n, survivors)
        await _write(store, n)
        n += 1
        await asyncio.sleep(PROBE_S)
        flowed = [w for w, done in waits.items() if done.is_set()]
        if flowed:
            back = min(max(deliveries.times[w].values()) for w in flowed)
            first_back = min(min(deliveries.times[w].values()) for w in flowed)
            return {
                "killed_host": killed,
                "first_event_after_kill_s": round(first_back - at, 3),
                "every_survivor_after_kill_s": round(back - at, 3),
                "probe_writes": n - first,
            }
    raise TimeoutError("events did not flow again after the kill")


async def _run(
    table: Path, servers: list[Host], redis_pid: int, per_host: int, writes: int
) -> dict[str, Any]:
    store = EmbeddedStore(TABLE, path=table)
    try:
        deliveries = Deliveries()
        sockets, where = await _subscribe(servers, per_host, deliveries)
        everyone = set(range(len(sockets)))
        try:
            first = await _warm_up(store, deliveries, everyone)
            serving = [pid for host in servers for pid in host.pids()]
            redis_idle, server_idle = cpu_s([redis_pid]), cpu_s(serving)
            await asyncio.sleep(IDLE_S)
            redis_idle = (cpu_s([redis_pid]) - redis_idle) / IDLE_S
            server_idle = (cpu_s(serving) - server_idle) / IDLE_S
            redis_cpu, server_cpu = cpu_s([redis_pid]), cpu_s(serving)
            began = time.perf_counter()
            every, lasts = await _timed(store, deliveries, everyone, range(first, first + writes))
            elapsed = time.perf_counter() - began
            redis_cpu = cpu_s([redis_pid]) - redis_cpu
            server_cpu = cpu_s(serving) - server_cpu
            events = writes * len(sockets)
            every.sort()
            lasts.sort()
            result: dict[str, Any] = {
                "hosts": HOSTS,
                "workers_per_host": 2,
                "subscribers": len(sockets),
                "writes": writes,
                "deliveries": len(every),
                "window_s": round(elapsed, 2),
                "p50_ms": round(percentile(every, 0.5), 2),
                "p99_ms": round(percentile(every, 0.99), 2),
                "last_p50_ms": round(percentile(lasts, 0.5), 2),
                "last_p99_ms": round(percentile(lasts, 0.99), 2),
                "redis_cpu_s": round(redis_cpu, 2),
                "server_cpu_s": round(server_cpu, 2),
                "redis_idle_cpu_pct": round(redis_idle * 100, 1),
                "server_idle_cpu_pct": round(server_idle * 100, 1),
                "redis_cpu_us_per_write": round(redis_cpu * 1e6 / writes, 1),
                "redis_cpu_us_per_delivery": round(redis_cpu * 1e6 / events, 2),
                "server_cpu_us_per_write": round(server_cpu * 1e6 / writes, 1),
                "server_cpu_us_per_delivery": round(server_cpu * 1e6 / events, 1),
            }
            result["failover"] = await _failover(store, servers, deliveries, where, first + writes)
            return result
        finally:
            for ws in sockets:
                ws.close()
    finally:
        await store.close()


async def _seed(table: Path) -> None:
    store = EmbeddedStore(TABLE, path=table)
    await store.put(Put(item=USER.to_item(TENANT)))
    await store.close()


def main(argv: Sequence[str]) -> None:
    parser = harness.parser("hosts", __doc__)
    parser.add_argument("--per-host", type=int, default=250, help="subscribers on each host")
    parser.add_argument("--writes", type=int, default=200, help="timed writes")
    args = parser.parse_args(argv)
    raise_fd_limit(args.per_host * HOSTS)
    with (
        tempfile.TemporaryDirectory(prefix="keygraph-hosts-") as directory,
        redis_server() as (url, version, redis_pid),
    ):
        scratch = Path(directory)
        (scratch / "table").mkdir()
        table = scratch / "table" / "keygraph.sqlite3"
        asyncio.run(_seed(table))
        with hosts(table, scratch, url, args.per_host * HOSTS) as servers:
            results = asyncio.run(_run(table, servers, redis_pid, args.per_host, args.writes))
    report = {"machine": machine_info(), "redis": version, "results": results}
    text = json.dumps(report, indent=2)
    RESULTS.write_text(text + "\n")
    print(text)

"""Write-to-client latency of subscriptions on a served worker: `python -m server serve`
(the compiled API, one worker) in its own process, its subscribers real WebSocket
connections from this process (bench/ws_client.py), and direct writes to the store from
this process too, each at a random moment of the stream reader's poll cycle. On the
embedded store the write goes to the server's SQLite file (its triggers append to the
change log the server reads); on DynamoDB Local it is a PutItem on the table whose stream
the server reads.

The server runs with the tenant's budget unbounded (KEYGRAPH_TENANT_BUDGET and _REFILL: a
replay is paid from it) and its connection limits at their defaults, which hold 1,000
subscribers of one tenant, a connection each, on one worker."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.machine import memory_kib
from bench.processes import start, stop, wait_answering
from bench.queries import to_global_id
from bench.stats import percentile
from bench.ws_client import OnNext, Subscriber, subscriber
from generated.models.user import User
from generated.table import TABLE
from keygraph.plan import Put
from keygraph.store import Store
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import (
    LOCAL_KEY_ID,
    LOCAL_REGION,
    LOCAL_SECRET,
    DynamoDBLocal,
    free_port,
)
from keygraph.stores.dynamodb.store import DynamoDBStore, make_client
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.settings import Settings
from testkit.stores import unique_table

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parents[1]
SECRET = "bench-secret-" + "x" * 40
TENANT = "bench"
SUBSCRIPTION = "subscription($id: ID!) { userChanged(id: $id) { change user { name } } }"
USER = User(
    user_id="U1", email="u@bench.test", name="n0", created_at="2026-01-01T00:00:00Z", version=1
)
SERVER_ENV = {
    "KEYGRAPH_JWT_SECRET": SECRET,
    "KEYGRAPH_TENANT_BUDGET": str(10**12),  # every event is charged: no throttling here
    "KEYGRAPH_TENANT_REFILL": str(10**12),
}
"""Set for the served worker besides its poll interval (and, on DynamoDB Local, its
endpoint and table)."""
CONNECTING = 64
"""Subscribers connecting at once (a worker closes the oldest of 256 awaiting init)."""
TIMEOUT_S = 60.0
IDLE_S = 1.0
WARM_UPS, WARM_UP_S = 10, 5.0
"""Seconds the server's idle CPU (its stream reader polling) is measured, to take it out."""


def raise_fd_limit(subscribers: int) -> None:
    """Lets this process (and the server it starts) open a socket per subscriber."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = subscribers * 2 + 256
    if soft != resource.RLIM_INFINITY and soft < wanted:
        cap = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (cap, hard))


@dataclass
class Served:
    """A served worker over a store this process writes to directly."""

    kind: str
    port: int
    pid: int
    store: Store


@contextlib.contextmanager
def serving(
    kind: str, poll: float, local: DynamoDBLocal | None = None, root: Path = ROOT
) -> Iterator[Served]:
    """`python -m server serve` of the checkout at `root` on a new embedded file, or on a
    new table of `local`."""
    with tempfile.TemporaryDirectory(prefix="keygraph-rt-") as scratch:
        data = Path(scratch)
        env = {**os.environ, **SERVER_ENV, "KEYGRAPH_STREAM_POLL_INTERVAL": str(poll)}
        client = None
        table = unique_table(TABLE)
        if local is None:
            store: Store = EmbeddedStore(TABLE, path=Settings(data_dir=data).embedded_path)
            served = "embedded"
        else:
            client = make_client(
                local.endpoint_url, LOCAL_REGION, 8, LOCAL_KEY_ID, LOCAL_SECRET, read_timeout=60
            )
            admin.create_table(client, table)
            store = DynamoDBStore(table, client=client)
            served = "dynamodb"
            env.update(
                KEYGRAPH_DYNAMODB_ENDPOINT=local.endpoint_url,
                KEYGRAPH_TABLE=table.name,
                KEYGRAPH_REGION=LOCAL_REGION,
                AWS_ACCESS_KEY_ID=LOCAL_KEY_ID,
                AWS_SECRET_ACCESS_KEY=LOCAL_SECRET,
            )
        port = free_port()
        command = [sys.executable, "-m", "server", "serve", "--store", served]
        command += ["--port", str(port), "--data", str(data), "--workers", "1"]
        process = start(command, env, root=root)
        try:
            wait_answering(f"http://{HOST}:{port}/readyz", process)
            yield Served(kind, port, process.pid, store)
        finally:
            stop(process)
            if client is not None:
                admin.delete_table(client, table.name)
                client.close()


@dataclass
class Arrivals:
    """When each subscriber got the event of each write (by the name it set)."""

    subscribers: int
    times: dict[int, list[float]] = field(default_factory=dict)
    complete: dict[int, asyncio.Event] = field(default_factory=dict)

    def expect(self, write: int) -> asyncio.Event:
        self.times.setdefault(write, [])
        return self.complete.setdefault(write, asyncio.Event())

    def arrived(self, write: int, at: float) -> None:
        times = self.times.setdefault(write, [])
        times.append(at)
        if len(times) == self.subscribers:
            self.expect(write).set()


def cpu_s(pid: int) -> float:
    """The CPU time a process's threads have run so far, in seconds, from their
    /proc/<pid>/task/*/schedstat (nanoseconds: /proc/<pid>/stat counts 10 ms ticks, coarse
    against a few events)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


async def _connect(
    served: Served, token: str, gate: asyncio.Semaphore, on_next: OnNext
) -> Subscriber:
    async with gate:
        ws = await subscriber(HOST, served.port, on_next)
        await ws.subscribe(token, SUBSCRIPTION, {"id": to_global_id("User", USER.user_id)})
        return ws


async def _write(store: Store, n: int) -> float:
    """Sets the user's name to n<n>; when the write began."""
    changed = USER.model_copy(update={"name": f"n{n}", "version": n + 1})
    started = time.perf_counter()
    await store.put(Put(item=changed.to_item(TENANT)))
    return started


async def measure(
    served: Served, subscribers: int, writes: int, poll: float, burst: int = 0
) -> dict[str, Any]:
    """Milliseconds from each write to its event at the first and at the last subscriber,
    and the server's CPU per event per subscriber while they ran; with `burst`, also the
    events per second the worker delivers from that many writes made back to back."""
    token = issue_token(Settings(jwt_secret=SECRET), TENANT, "bench", roles=["admin"])
    await served.store.put(Put(item=USER.to_item(TENANT)))
    gate = asyncio.Semaphore(CONNECTING)
    arrivals = Arrivals(subscribers)

    def on_next(payload: Any, at: float) -> None:
        arrivals.arrived(int(payload["data"]["userChanged"]["user"]["name"][1:]), at)

    connecting = (_connect(served, token, gate, on_next) for _ in range(subscribers))
    sockets = await asyncio.gather(*connecting)
    try:
        first = await _warm_up(served.store, arrivals, sockets)
        rss_kib = memory_kib(served.pid)["VmRSS"]
        idle = cpu_s(served.pid)
        await asyncio.sleep(IDLE_S)
        idle = (cpu_s(served.pid) - idle) / IDLE_S
        cpu, client, began = cpu_s(served.pid), time.process_time(), time.perf_counter()
        firsts, lasts = await _timed(served.store, arrivals, range(first, first + writes), poll)
        elapsed = time.perf_counter() - began
        cpu = cpu_s(served.pid) - cpu - idle * elapsed
        client = time.process_time() - client
        events = writes * subscribers
        result: dict[str, Any] = {
            "store": served.kind,
            "subscribers": subscribers,
            "poll_interval_s": poll,
            "writes": writes,
            "first_p50_ms": round(percentile(sorted(firsts), 0.5), 2),
            "first_p99_ms": round(percentile(sorted(firsts), 0.99), 2),
            "last_p50_ms": round(percentile(sorted(lasts), 0.5), 2),
            "last_p99_ms": round(percentile(sorted(lasts), 0.99), 2),
            "server_cpu_us_per_event": round(cpu * 1e6 / events, 1),
            "server_idle_cpu_pct": round(idle * 100, 2),
            "client_cpu_us_per_event": round(client * 1e6 / events, 1),
            "server_rss_mib": round(rss_kib / 1024, 1),
        }
        if burst:
            result.update(await _burst(served, arrivals, first + writes, burst))
        return result
    finally:
        for ws in sockets:
            ws.close()


async def _warm_up(store: Store, arrivals: Arrivals, sockets: list[Subscriber]) -> int:
    """Writes until one reaches every subscriber (a subscribe is answered by the first
    event, so the last ones may still be registering); the next write's number."""
    for n in range(1, WARM_UPS + 1):
        done = arrivals.expect(n)
        await _write(store, n)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), WARM_UP_S)
            return n + 1
    closed = [ws.closed for ws in sockets if ws.closed is not None]
    got = len(arrivals.times[WARM_UPS])
    raise RuntimeError(f"{got} of {arrivals.subscribers} got a warm-up write; closed: {closed[:3]}")


async def _timed(
    store: Store, arrivals: Arrivals, numbers: range, poll: float
) -> tuple[list[float], list[float]]:
    """Milliseconds from each write to its first and its last event; each write at a random
    moment of the poll cycle, once the previous one reached every subscriber."""
    jitter = random.Random(7)
    firsts: list[float] = []
    lasts: list[float] = []
    for n in numbers:
        await asyncio.sleep(jitter.uniform(0, poll))
        done = arrivals.expect(n)
        started = await _write(store, n)
        await asyncio.wait_for(done.wait(), TIMEOUT_S)
        firsts.append((min(arrivals.times[n]) - started) * 1000)
        lasts.append((max(arrivals.times[n]) - started) * 1000)
    return firsts, lasts


async def _burst(served: Served, arrivals: Arrivals, first: int, writes: int) -> dict[str, Any]:
    """Writes made back to back, timed from the first to the last event of the last one."""
    waits = [arrivals.expect(n) for n in range(first, first + writes)]
    cpu = cpu_s(served.pid)
    started = time.perf_counter()
    for n in range(first, first + writes):
        await _write(served.store, n)
    await asyncio.wait_for(asyncio.gather(*(done.wait() for done in waits)), TIMEOUT_S)
    ended = max(max(arrivals.times[n]) for n in range(first, first + writes))
    cpu = cpu_s(served.pid) - cpu
    events = writes * arrivals.subscribers
    return {
        "burst_writes": writes,
        "events_per_s": round(events / (ended - started)),
        "burst_server_cpu_us_per_event": round(cpu * 1e6 / events, 1),
    }

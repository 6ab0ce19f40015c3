"""Subscriptions' write-to-client latency, events a second and memory. By default served
(bench/realtime_served.py): `python -m server serve` in its own process, its subscribers
real WebSocket connections from this one, on the embedded store or (`--dynamodb-local`)
DynamoDB Local, with 1, 100 and 1,000 subscribers, medians of rounds (bench/realtime_rounds.py).
`--base REF`: the worker of REF's checkout and this one's take turns in each round
(embedded, the last number of subscribers), for a before and after side by side.
`--in-process`: the subscribers are httpx-ws clients on the ASGI transport of the compiled
API (server/compiled.py), in the server's own loop (their cost counted as the server's), and
the memory per idle subscription, traced under server code. Prints one JSON object.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from httpx_ws import AsyncWebSocketSession, aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport

from bench import harness
from bench.machine import machine_info
from bench.queries import to_global_id
from bench.realtime_rounds import paired_runs, served_runs
from bench.stats import percentile
from bench.targets import compiled_app
from generated.models.user import User
from generated.table import TABLE
from keygraph.plan import Put
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.settings import Settings
from testkit.stores import drop_store, open_store

SUBSCRIPTION = "subscription($id: ID!) { userChanged(id: $id) { change user { name } } }"
SECRET = "bench-secret-" + "x" * 40


async def _subscriber(client: httpx.AsyncClient, token: str, user: str, stack: Any) -> Any:
    ws: AsyncWebSocketSession = await stack.enter_async_context(
        aconnect_ws(
            "http://bench/graphql",
            client,
            subprotocols=["graphql-transport-ws"],
            keepalive_ping_interval_seconds=None,
        )
    )
    await ws.send_json({"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"}})
    await ws.receive_json()
    payload = {"query": SUBSCRIPTION, "variables": {"id": to_global_id("User", user)}}
    await ws.send_json({"type": "subscribe", "id": "1", "payload": payload})
    return ws


USER = User(
    user_id="U1",
    email="u@bench.test",
    name="n0",
    created_at="2026-01-01T00:00:00Z",
    version=1,
)


def _settings(scratch: Path, subscribers: int, poll: float) -> Settings:
    """One subscription per connection, as many as the run has subscribers."""
    return Settings(
        data_dir=scratch,
        jwt_secret=SECRET,
        stream_poll_interval=poll,
        max_subscriptions_per_connection=1,
        max_subscriptions_per_tenant=subscribers,
        max_subscriptions_per_worker=subscribers,
    ).resolved()


async def measure(
    subscribers: int, writes: int, poll: float, dynamodb: Any = None
) -> dict[str, Any]:
    """Milliseconds from a write to its event at the first and at the last subscriber, on
    the embedded store, or on a new DynamoDB Local table through the boto3 client
    `dynamodb`."""

    with tempfile.TemporaryDirectory() as scratch:
        kind = "embedded" if dynamodb is None else "dynamodb-local"
        store = open_store(kind, TABLE, Path(scratch), dynamodb)
        settings = _settings(Path(scratch), subscribers, poll)
        token = issue_token(settings, "bench", "admin", roles=["admin"])
        await store.put(Put(item=USER.to_item("bench")))
        app = compiled_app(settings, store)
        firsts: list[float] = []
        lasts: list[float] = []
        async with (
            app.router.lifespan_context(app),
            ASGIWebSocketTransport(app=app) as transport,
            httpx.AsyncClient(transport=transport, base_url="http://bench") as client,
            contextlib.AsyncExitStack() as stack,
        ):
            sockets = [await _subscriber(client, token, "U1", stack) for _ in range(subscribers)]
            await asyncio.sleep(0.5)
            jitter = random.Random(7)
            for n in range(1, writes + 1):
                # at a random moment of the reader's poll cycle, as writes come in service
                await asyncio.sleep(jitter.uniform(0, poll))
                changed = USER.model_copy(update={"name": f"n{n}", "version": n + 1})
                started = time.perf_counter()
                await store.put(Put(item=changed.to_item("bench")))
                arrived = []
                for ws in sockets:
                    await ws.receive_json()
                    arrived.append(time.perf_counter() - started)
                firsts.append(min(arrived) * 1000)
                lasts.append(max(arrived) * 1000)
        await drop_store(store)
    return {
        "store": kind,
        "subscribers": subscribers,
        "poll_interval_s": poll,
        "writes": writes,
        "first_p50_ms": round(percentile(firsts, 0.5), 2),
        "first_p99_ms": round(percentile(firsts, 0.99), 2),
        "last_p50_ms": round(percentile(lasts, 0.5), 2),
        "last_p99_ms": round(percentile(lasts, 0.99), 2),
    }


_SERVER_FRAMES = ("/keygraph/", "/generated/", "/server/", "/starlette/", "/graphql/")


def _server_bytes(snapshot: tracemalloc.Snapshot) -> int:
    """Bytes of the traces allocated with server code on their stack (the ASGI app runs
    inside the client's transport, so a trace without it is the client's)."""
    return sum(
        trace.size
        for trace in snapshot.traces
        if any(part in frame.filename for frame in trace.traceback for part in _SERVER_FRAMES)
    )


async def idle_memory(subscriptions: int) -> dict[str, Any]:
    """Bytes the server holds per idle subscription (one per connection): traced memory
    allocated under server code, after the subscriptions minus before."""
    with tempfile.TemporaryDirectory() as scratch:
        store = EmbeddedStore(TABLE, path=Path(scratch) / "kg.sqlite3")
        settings = Settings(
            data_dir=Path(scratch),
            jwt_secret=SECRET,
            max_subscriptions_per_tenant=subscriptions + 1,
            max_subscriptions_per_worker=subscriptions + 1,
        ).resolved()
        token = issue_token(settings, "bench", "admin", roles=["admin"])
        app = compiled_app(settings, store)
        async with (
            app.router.lifespan_context(app),
            ASGIWebSocketTransport(app=app) as transport,
            httpx.AsyncClient(transport=transport, base_url="http://bench") as client,
            contextlib.AsyncExitStack() as stack,
        ):
            await _subscriber(client, token, "U0", stack)  # warm the caches
            await asyncio.sleep(0.2)
            tracemalloc.start(40)
            before = _server_bytes(tracemalloc.take_snapshot())
            for n in range(subscriptions):
                await _subscriber(client, token, f"U{n}", stack)
            await asyncio.sleep(0.5)
            after = _server_bytes(tracemalloc.take_snapshot())
            tracemalloc.stop()
        await store.close()
    return {"subscriptions": subscriptions, "bytes_each": round((after - before) / subscriptions)}


async def _receive_all(ws: AsyncWebSocketSession, count: int) -> None:
    for _ in range(count):
        await ws.receive_json()


async def throughput(subscribers: int, writes: int, poll: float = 0.01) -> dict[str, Any]:
    """Events the worker delivers per second: a burst of writes to one user, each sent to
    every subscriber, timed from the first write to the last event received; and the
    process's CPU time per event (server and in-process client: less noisy than the wall
    time on a shared machine)."""
    with tempfile.TemporaryDirectory() as scratch:
        store = EmbeddedStore(TABLE, path=Path(scratch) / "kg.sqlite3")
        settings = _settings(Path(scratch), subscribers, poll)
        token = issue_token(settings, "bench", "admin", roles=["admin"])
        await store.put(Put(item=USER.to_item("bench")))
        app = compiled_app(settings, store)
        async with (
            app.router.lifespan_context(app),
            ASGIWebSocketTransport(app=app) as transport,
            httpx.AsyncClient(transport=transport, base_url="http://bench") as client,
            contextlib.AsyncExitStack() as stack,
        ):
            sockets = [await _subscriber(client, token, "U1", stack) for _ in range(subscribers)]
            await asyncio.sleep(0.5)
            started, cpu = time.perf_counter(), time.process_time()
            for n in range(1, writes + 1):
                changed = USER.model_copy(update={"name": f"n{n}", "version": n + 1})
                await store.put(Put(item=changed.to_item("bench")))
            await asyncio.gather(*(_receive_all(ws, writes) for ws in sockets))
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        await store.close()
    return {
        "subscribers": subscribers,
        "writes": writes,
        "events": subscribers * writes,
        "seconds": round(elapsed, 3),
        "events_per_s": round(subscribers * writes / elapsed),
        "cpu_ms_per_event": round(cpu * 1000 / (subscribers * writes), 4),
    }


async def in_process(writes: int) -> dict[str, Any]:
    """The in-process runs: latency and events a second with the client in the server's
    loop (for reference), and the memory per idle subscription."""
    runs = [await measure(subscribers, writes, 0.01) for subscribers in (1, 100)]
    return {
        "machine": machine_info(),
        "runs": runs,
        "idle": await idle_memory(200),
        "throughput": await throughput(1000, 10),
    }


def main(argv: Sequence[str]) -> None:
    parser = harness.parser("realtime", __doc__)
    parser.add_argument("--writes", type=int, default=50, help="timed writes per run (50)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, medians reported (3)")
    parser.add_argument(
        "--subscribers", type=int, nargs="+", default=[1, 100, 1000], help="(1 100 1000)"
    )
    parser.add_argument(
        "--dynamodb-local", action="store_true", help="served on DynamoDB Local instead"
    )
    parser.add_argument(
        "--base",
        help="a git ref: its checkout's worker and this one's take turns each round, on the "
        "embedded store, with the last of --subscribers",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="the client in the server's process instead (and memory per idle subscription)",
    )
    args = parser.parse_args(argv)
    if args.in_process:
        result = asyncio.run(in_process(args.writes))
    elif args.base:
        result = paired_runs(args.base, args.subscribers[-1], args.writes, args.rounds)
    else:
        kind = "dynamodb-local" if args.dynamodb_local else "embedded"
        result = served_runs(kind, args.subscribers, args.writes, args.rounds)
    print(json.dumps(result, indent=2))

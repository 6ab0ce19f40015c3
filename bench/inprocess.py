"""Requests to ASGI apps inside this process, one at a time, so the latency is the app's own:
no sockets, no HTTP parsing, no second process."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, TypeVar

from bench.asgi import AsgiClient
from bench.queries import Operation
from bench.stats import RunSummary, summarize

K = TypeVar("K")


class RequestFailed(RuntimeError):
    """A benchmark request answered with an HTTP error or GraphQL errors."""


async def execute(client: AsgiClient, op: Operation) -> dict[str, Any]:
    """The operation's JSON answer; RequestFailed unless it is a clean 200 without errors."""
    response = await client.post("/graphql", json=op.body())
    answer: dict[str, Any] = response.json()
    if response.status_code != 200 or answer.get("errors"):
        raise RequestFailed(f"{op.name}: HTTP {response.status_code}: {response.text[:500]}")
    return answer


async def store_counts(client: AsgiClient, op: Operation) -> dict[str, int]:
    """Store calls and sequential waves of one request, from keygraph's dev-mode extensions."""
    extensions = (await execute(client, op)).get("extensions") or {}
    if "storeCalls" not in extensions or "storeWaves" not in extensions:
        raise RequestFailed(f"{op.name}: the answer carries no storeCalls/storeWaves extensions")
    return {"calls": int(extensions["storeCalls"]), "waves": int(extensions["storeWaves"])}


async def timed_runs(
    clients: Mapping[K, AsgiClient],
    op: Operation,
    duration_s: float,
    max_requests: int,
    min_requests: int = 1,
) -> dict[K, RunSummary]:
    """Each client's run of `op`, interleaved request by request: rounds of one request per
    client, in turn, for `duration_s` per client (at least `min_requests` rounds, at most
    `max_requests`). Side by side, a slow spell of a shared machine falls on every client
    alike instead of on whichever ran during it. A client's requests per second is its
    request count over the time its own requests took."""
    body = op.body()
    latencies: dict[K, list[float]] = {name: [] for name in clients}
    errors = dict.fromkeys(clients, 0)
    deadline = time.perf_counter() + duration_s * len(clients)
    rounds = 0
    while rounds < max_requests and (time.perf_counter() < deadline or rounds < min_requests):
        for name, client in clients.items():
            sent = time.perf_counter()
            response = await client.post("/graphql", json=body)
            latencies[name].append(time.perf_counter() - sent)
            if response.status_code != 200 or b'"errors"' in response.content:
                errors[name] += 1
        rounds += 1
    return {name: summarize(taken, sum(taken), errors[name]) for name, taken in latencies.items()}

"""The Prometheus metrics an app records (observed.py): requests by operation name and outcome
code, refusals, requests in flight, store calls by DynamoDB operation and access pattern with
their capacity units (the store's retries and throttles are keygraph/stores/dynamodb/
counters.py's), and the change stream's elected reader (elected.py). `/metrics` answers them
in Prometheus' text format to a bearer of its token."""

from __future__ import annotations

import contextlib
import hmac
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Generic, TypeVar

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client import multiprocess as prometheus_multiprocess
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.requests import Request
from starlette.responses import Response

from keygraph.capacity import Meter

M = TypeVar("M", Counter, Histogram)

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"
"""Where worker processes write their values, when several serve (prometheus_client)."""
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
STORE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
REFUSED_STATUSES = frozenset({429, 503, 504})
MAX_OPERATIONS = 500
"""Distinct operation names a worker labels its metrics with; later ones are `(other)`:
clients choose the names, and every label value is a time series kept forever."""

REQUESTS = Histogram(
    "keygraph_request_duration_seconds",
    "GraphQL requests by operation name and outcome code (OK, or the deciding error's code).",
    ["operation", "code"],
    buckets=LATENCY_BUCKETS,
)
REFUSALS = Counter(
    "keygraph_requests_refused",
    "Requests refused by the tenant budget (429), load shedding (503) or their timeout (504).",
    ["status", "code"],
)
IN_FLIGHT = Gauge(
    "keygraph_requests_in_flight",
    "GraphQL requests being answered.",
    multiprocess_mode="livesum",
)
STORE_CALLS = Histogram(
    "keygraph_store_call_duration_seconds",
    "Store calls by DynamoDB operation and access pattern, with retries inside.",
    ["call", "pattern"],
    buckets=STORE_BUCKETS,
)
STORE_ERRORS = Counter(
    "keygraph_store_call_errors",
    "Store calls that failed, by the protocol's error.",
    ["call", "pattern", "error"],
)
CAPACITY = Counter(
    "keygraph_capacity_units",
    "DynamoDB capacity units consumed (read or write), by access pattern.",
    ["unit", "pattern"],
)
STREAM_READER = Gauge(
    "keygraph_stream_reader",
    "1 on the worker holding the stream reader's lease, else 0 (with Redis).",
    multiprocess_mode="livesum",
)
STREAM_READER_TAKES = Counter(
    "keygraph_stream_reader_takes",
    "Times a worker took the stream reader's lease (with Redis): each is a failover but one.",
)
STREAM_APPENDED = Counter(
    "keygraph_stream_appended_records",
    "Change stream records the reader appended to the Redis Stream.",
)
RESUMES = Counter(
    "keygraph_stream_resumes",
    "Resumes by what they replayed from: the Redis Stream or the change stream (with Redis).",
    ["source"],
)


class Children(Generic[M]):
    """A metric's children by label values, kept: `labels()` takes a lock and checks the
    values on every call. Only for labels of a bounded set of values."""

    def __init__(self, metric: M) -> None:
        self.metric: M = metric
        self.children: dict[tuple[str, ...], M] = {}

    def __call__(self, *values: str) -> M:
        child = self.children.get(values)
        if child is None:
            child = self.children[values] = self.metric.labels(*values)
        return child


REQUESTS_BY: Children[Histogram] = Children(REQUESTS)
STORE_CALLS_BY: Children[Histogram] = Children(STORE_CALLS)
CAPACITY_BY: Children[Counter] = Children(CAPACITY)
RESUMES_BY: Children[Counter] = Children(RESUMES)


class OperationNames:
    """The label of an operation name, from a bounded set."""

    def __init__(self, limit: int = MAX_OPERATIONS) -> None:
        self.limit = limit
        self.seen: set[str] = set()

    def label(self, name: str | None) -> str:
        if name is None:
            return ""
        if name in self.seen:
            return name
        if len(self.seen) >= self.limit:
            return "(other)"
        self.seen.add(name)
        return name


def observe_request(operation: str, code: str, status: int, elapsed: float) -> None:
    """One request answered: its duration under its operation's label and its code, and
    its refusal when its status is one."""
    REQUESTS_BY(operation, code).observe(elapsed)
    if status in REFUSED_STATUSES:
        REFUSALS.labels(str(status), code).inc()


def observe_store_call(
    kind: str, pattern: str, elapsed: float, meter: Meter, error: Exception | None
) -> None:
    """One store call: its duration, the capacity units it used, and its error if any."""
    STORE_CALLS_BY(kind, pattern).observe(elapsed)
    if meter.read_units:
        CAPACITY_BY("read", pattern).inc(meter.read_units)
    if meter.write_units:
        CAPACITY_BY("write", pattern).inc(meter.write_units)
    if error is not None:
        STORE_ERRORS.labels(kind, pattern, type(error).__name__).inc()


@contextlib.contextmanager
def multiprocess_directory(enabled: bool) -> Iterator[None]:
    """While worker processes run (they inherit the environment), when metrics are
    `enabled`: a multiprocess directory, emptied of an earlier run's values; removed after
    when made here."""
    if not enabled:
        yield
        return
    given = os.environ.get(MULTIPROC_DIR)
    if given:
        for stale in Path(given).glob("*.db"):
            stale.unlink()
        yield
        return
    made = os.environ[MULTIPROC_DIR] = tempfile.mkdtemp(prefix="keygraph-metrics-")
    try:
        yield
    finally:
        del os.environ[MULTIPROC_DIR]
        shutil.rmtree(made, ignore_errors=True)


def worker_exited(pid: int) -> None:
    """Forgets the live gauges (requests in flight) of a worker that is gone."""
    if os.environ.get(MULTIPROC_DIR):
        prometheus_multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


def registry() -> CollectorRegistry:
    """What a scrape reports: every worker's values under multiprocess mode, else this
    process's (with its CPU and memory)."""
    path = os.environ.get(MULTIPROC_DIR)
    if not path:
        return REGISTRY
    merged = CollectorRegistry()
    prometheus_multiprocess.MultiProcessCollector(merged, path)  # type: ignore[no-untyped-call]
    return merged


def metrics_response(request: Request, token: str) -> Response:
    """The metrics, to a request bearing the token; 401 to any other."""
    given = request.headers.get("authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return Response("unauthorized\n", 401, {"WWW-Authenticate": "Bearer"}, "text/plain")
    return Response(generate_latest(registry()), media_type=CONTENT_TYPE_LATEST)

"""The server's Prometheus metrics (the store's retries and throttles are keygraph's own:
keygraph/stores/dynamodb/counters.py). Under `serve --workers N` each worker writes its
values to PROMETHEUS_MULTIPROC_DIR and a scrape of any worker reads them all (exposition.py).
"""

from __future__ import annotations

from typing import Generic, TypeVar

from prometheus_client import Counter, Gauge, Histogram

M = TypeVar("M", Counter, Histogram)

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
STORE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)

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
TENANT_REQUESTS = Counter(
    "keygraph_tenant_requests",
    "GraphQL requests by tenant and outcome code (only when tenant labels are allowed).",
    ["tenant", "code"],
)
TENANT_CAPACITY = Counter(
    "keygraph_tenant_capacity_units",
    "Capacity units consumed by tenant (only when tenant labels are allowed).",
    ["tenant", "unit"],
)
CLEANUP_PENDING = Gauge(
    "keygraph_cleanup_tasks_pending",
    "Cleanup tasks in the table, not yet finished (read at scrape time).",
    multiprocess_mode="mostrecent",
)
CLEANUP_OLDEST = Gauge(
    "keygraph_cleanup_oldest_task_age_seconds",
    "Age of the oldest unfinished cleanup task; 0 with none (read at scrape time).",
    multiprocess_mode="mostrecent",
)
MIGRATION_SCANNED = Gauge(
    "keygraph_migration_items_scanned",
    "Items a table migration's backfill has read, from its checkpoint (read at scrape time).",
    ["migration"],
    multiprocess_mode="mostrecent",
)
MIGRATION_UPDATED = Gauge(
    "keygraph_migration_items_updated",
    "Items a table migration's backfill has rewritten, from its checkpoint.",
    ["migration"],
    multiprocess_mode="mostrecent",
)
MIGRATION_DONE = Gauge(
    "keygraph_migration_done",
    "1 once a table migration finished, else 0, from its checkpoint.",
    ["migration"],
    multiprocess_mode="mostrecent",
)
MIGRATION_UPDATED_AT = Gauge(
    "keygraph_migration_checkpoint_timestamp_seconds",
    "When a table migration last saved its checkpoint (Unix time): a stalled one stops moving.",
    ["migration"],
    multiprocess_mode="mostrecent",
)

SHARED_FALLBACKS = Counter(
    "keygraph_shared_fallbacks",
    "Budget and place calls answered by the host's own counts: Redis could not be reached.",
    ["what"],
)
REDIS_UP = Gauge(
    "keygraph_redis_up",
    "1 while the worker reaches Redis for shared budgets and places, else 0 (with Redis).",
    multiprocess_mode="livemin",
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
FALLBACKS_BY: Children[Counter] = Children(SHARED_FALLBACKS)
RESUMES_BY: Children[Counter] = Children(RESUMES)

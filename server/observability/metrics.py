"""The server's own Prometheus metrics: per tenant, the table's cleanup tasks and migrations,
and shared budgets; those `keygraph serve` records too (requests, store calls, capacity, the
elected stream reader) are keygraph/serve/metrics.py's. Under `serve --workers N` each
worker writes its values to PROMETHEUS_MULTIPROC_DIR and a scrape of any worker reads them
all (exposition.py).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge

from keygraph.serve.metrics import Children

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

FALLBACKS_BY: Children[Counter] = Children(SHARED_FALLBACKS)

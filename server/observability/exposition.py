"""The hand-written app's `/metrics` in Prometheus' text format, never public: on the app's
port behind a bearer token (KEYGRAPH_METRICS_TOKEN).

The table's own state is read into gauges every TABLE_INTERVAL seconds by each worker: the
cleanup tasks not finished, and each migration's checkpoint (keygraph/migrate/run.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from generated.models.cleanup_task import CleanupTask
from generated.queries.cleanup_task import plan_cleanup_tasks
from keygraph.errors import StoreError
from keygraph.migrate.target import MIGRATION_PARTITION
from keygraph.plan import Query
from keygraph.store import Store
from server.observability import metrics

log = logging.getLogger("keygraph.metrics")

TABLE_INTERVAL = 15.0
"""Seconds between two readings of the table's cleanup tasks and migration checkpoints."""
MAX_TASKS_COUNTED = 10_000
"""Cleanup tasks counted at most (a count stuck here means at least as many)."""


async def _count_cleanups(store: Store) -> tuple[int, float]:
    """Cleanup tasks in the table (at most MAX_TASKS_COUNTED), and the oldest one's age."""
    count, oldest, start = 0, 0.0, None
    while count < MAX_TASKS_COUNTED:
        page = await store.query(plan_cleanup_tasks(limit=1000, start=start))
        if page.items and count == 0:
            created = CleanupTask.from_item(page.items[0]).created_at
            oldest = max(0.0, (datetime.now(UTC) - created).total_seconds())
        count += len(page.items)
        if page.last_key is None:
            break
        start = page.last_key
    return count, oldest


async def _read_migrations(store: Store) -> None:
    start = None
    while True:
        page = await store.query(Query(partition=MIGRATION_PARTITION, start=start))
        for item in page.items:
            name = str(item.get("SK", ""))
            state: dict[str, Any] = item.get("state") or {}
            updated = sum(int(n) for n in (state.get("updated") or {}).values())
            metrics.MIGRATION_SCANNED.labels(name).set(int(state.get("scanned", 0)))
            metrics.MIGRATION_UPDATED.labels(name).set(updated)
            metrics.MIGRATION_DONE.labels(name).set(1 if state.get("done") else 0)
            metrics.MIGRATION_UPDATED_AT.labels(name).set(int(state.get("updated_at", 0)))
        if page.last_key is None:
            return
        start = page.last_key


async def read_table(store: Store) -> None:
    """The table's cleanup tasks and migrations into their gauges; a store that does not
    answer leaves them as they were."""
    try:
        count, oldest = await _count_cleanups(store)
        metrics.CLEANUP_PENDING.set(count)
        metrics.CLEANUP_OLDEST.set(oldest)
        await _read_migrations(store)
    except (StoreError, OSError) as exc:
        log.warning("table gauges not read: the store is unavailable (%s)", exc)


@contextlib.asynccontextmanager
async def reading_table(store: Store, interval: float = TABLE_INTERVAL) -> AsyncIterator[None]:
    """Reads the table's gauges now and every `interval` seconds while open."""

    async def loop() -> None:
        while True:
            started = time.monotonic()
            await read_table(store)
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))

    task = asyncio.create_task(loop(), name="keygraph-table-gauges")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

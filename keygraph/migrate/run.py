"""`table migrate`: carry a plan out, online and resumably.

Index creations and settings come first (each waited on), then the backfill: every item read
again, and each one the spec stores differently updated in place with a condition that it
is still the item read (its version, or else every attribute), so a newer write is never
overwritten (the item is then counted as skipped: its writer, running the new spec's code,
stored it as the spec says). Deletions come last. After each page the position is saved in a
checkpoint item in the table itself, so a migration killed mid-way, on any machine, continues
from there; run again when done, it writes nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from keygraph.admin import TableAdmin
from keygraph.errors import ConditionFailed
from keygraph.plan import Get, Put, Update, stream_view
from keygraph.store import Store

from .backfill import judge
from .plan import IndexStep, Plan, SettingStep, scan_items
from .target import MIGRATION_PARTITION, Target

CONCURRENCY = {"embedded": 1, "dynamodb": 16}
"""Updates in flight at once: the embedded store answers inline; DynamoDB in round trips."""

Progress = Callable[[int, int], None]
"""Told (items read, items updated) after every page."""


@dataclass(slots=True)
class Report:
    """What a migration did."""

    steps_done: list[str] = field(default_factory=list)
    scanned: int = 0
    updated: dict[str, int] = field(default_factory=dict)
    skipped_newer: int = 0
    resumed_at: int = 0
    """Items the checkpoint says were read before this run."""
    seconds: float = 0.0

    def render(self) -> str:
        lines = [f"  {step}: done" for step in self.steps_done]
        rate = self.scanned / self.seconds if self.seconds else 0.0
        updated = sum(self.updated.values())
        lines.append(
            f"  backfill: {self.scanned:,} items read ({rate:,.0f}/s), {updated:,} updated"
            + (
                f" ({', '.join(f'{n} {c:,}' for n, c in sorted(self.updated.items()))})"
                if updated
                else ""
            )
            + f", {self.skipped_newer:,} skipped (written meanwhile)"
            + (f"; resumed after {self.resumed_at:,} items" if self.resumed_at else "")
        )
        lines.append(f"  in {self.seconds:.1f} s")
        return "\n".join(lines)


class Checkpoint:
    """A migration's progress, kept in an item of the table (partition KEYGRAPH#MIGRATION),
    one per spec fingerprint and scope."""

    def __init__(self, store: Store, target: Target, tenant: str | None) -> None:
        self.store = store
        self.key = {
            target.table.partition_key: MIGRATION_PARTITION,
            target.table.sort_key: f"{target.fingerprint}#{tenant or '*'}",
        }
        self.state: dict[str, Any] = {}

    async def load(self) -> dict[str, Any]:
        found = await self.store.get(Get(self.key, consistent=True))
        self.state = {} if found is None else dict(found.get("state") or {})
        return self.state

    async def save(self, **changes: Any) -> None:
        self.state.update(changes, updated_at=int(time.time()))
        await self.store.put(Put({**self.key, "state": self.state}))


class RateLimit:
    """At most `per_second` writes a second (None: no cap)."""

    def __init__(self, per_second: float | None) -> None:
        self.interval = 0.0 if not per_second else 1.0 / per_second
        self.next = time.monotonic()

    async def wait(self, count: int) -> None:
        if not self.interval:
            return
        self.next = max(self.next, time.monotonic()) + count * self.interval
        delay = self.next - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)


async def _apply(store: Store, update: Update) -> bool:
    """Whether the conditional update was written (False: the item changed since it was
    read, or is gone)."""
    try:
        await store.update(update)
    except ConditionFailed:
        return False
    return True


async def migrate(
    plan: Plan,
    target: Target,
    store: Store,
    admin: TableAdmin,
    max_writes_per_second: float | None = None,
    progress: Progress | None = None,
) -> Report:
    """Carry `plan` out (a plan with refusals is not carried out: make_plan's caller stops)."""
    if plan.refused:
        raise ValueError("a plan with refusals cannot be carried out")
    started = time.perf_counter()
    report = Report()
    if plan.create_table:
        admin.create_table()
        report.steps_done.append("create the table")
    for step in plan.steps:
        _structural(admin, step)
        report.steps_done.append(step.describe())
    checkpoint = Checkpoint(store, target, plan.tenant)
    state = await checkpoint.load()
    if state.get("done"):
        state = {}
    position = state.get("position")
    report.resumed_at = int(state.get("scanned", 0))
    report.scanned = report.resumed_at
    report.updated = dict(state.get("updated", {}))
    report.skipped_newer = int(state.get("skipped", 0))
    limit = RateLimit(max_writes_per_second)
    width = CONCURRENCY.get(plan.store, CONCURRENCY["dynamodb"])
    async for items, last_key in scan_items(store, target, plan.tenant, position):
        updates: list[tuple[str, Update]] = []
        for item in items:
            verdict = judge(target, item)
            if verdict.entity is not None and verdict.update is not None:
                updates.append((verdict.entity, verdict.update))
        for offset in range(0, len(updates), width):
            chunk = updates[offset : offset + width]
            await limit.wait(len(chunk))
            written = await asyncio.gather(*(_apply(store, update) for _, update in chunk))
            for (entity, _), ok in zip(chunk, written, strict=True):
                if ok:
                    report.updated[entity] = report.updated.get(entity, 0) + 1
                else:
                    report.skipped_newer += 1
        report.scanned += len(items)
        await checkpoint.save(
            position=last_key,
            scanned=report.scanned,
            updated=report.updated,
            skipped=report.skipped_newer,
            done=False,
        )
        if progress is not None:
            progress(report.scanned, sum(report.updated.values()))
    for step in plan.deletes:
        _structural(admin, step)
        report.steps_done.append(step.describe())
    await checkpoint.save(position=None, done=True)
    report.seconds = time.perf_counter() - started
    return report


def _structural(admin: TableAdmin, step: IndexStep | SettingStep) -> None:
    """One step on the table itself; a step found already done is not done again."""
    if isinstance(step, IndexStep):
        live = admin.describe()
        present = live is not None and step.index.name in live.indexes
        if step.action == "create" and not present:
            admin.create_index(step.index)
        elif step.action == "delete" and present:
            admin.delete_index(step.index.name)
    elif step.setting == "ttl":
        admin.set_ttl(step.value if isinstance(step.value, str) else None)
    elif step.setting == "stream":
        admin.set_stream(stream_view(step.value))
    else:
        admin.set_point_in_time_recovery(bool(step.value))


def item_count(admin: TableAdmin, target: Target, tenant: str | None) -> int | None:
    """How many items the backfill will read, as far as the store can tell cheaply."""
    from .plan import tenant_prefixes

    counts = [admin.count(prefix) for prefix in tenant_prefixes(target, tenant)]
    return None if any(c is None for c in counts) else sum(c for c in counts if c is not None)

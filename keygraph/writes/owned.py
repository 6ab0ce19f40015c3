"""Items deleted after their owner: the owner's delete records a task in its transaction
(in the table's `~KEYGRAPH#CLEANUP` partition), and the task removes what each of the
owner's `owned` patterns finds, a page at a time, until none finds anything. Each page can
be done again, by any process: the deleting request works on its task for a while, and a
sweep (`sweep`: `keygraph serve` runs one, a scheduled function can) finishes what is left,
after a crash too. An owned item is removed by its own entity's delete (with its claims,
copies and counts), by its source's when it is a copy, or alone."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from keygraph.errors import NotFound
from keygraph.ids import new_id
from keygraph.plan import Condition, Delete, Item, Key, Put, Query, TableDef
from keygraph.store import Session

from .bindings import Owned, Removal, Writes

log = logging.getLogger("keygraph.writes")

TASKS = "~KEYGRAPH#CLEANUP"
"""The partition of every pending task, whatever its tenant."""
PAGE = 25
"""Items one page of a task removes."""
INLINE_SECONDS = 2.0
"""How long the deleting request works on its task before leaving the rest to a sweep."""
SETTLE_SECONDS = 1.0
"""How old a task must be before an empty read of an index may end it: an item written just
before the owner's delete may not be in a DynamoDB global secondary index yet."""


Remover = Callable[[Session, str | None, Writes, Mapping[str, Any]], Awaitable[Any]]
"""An entity's delete (run.py's), by which an owned item goes with what it keeps."""


@dataclass(frozen=True, slots=True)
class Task:
    """The removal of what an owner deleted at `created` (epoch seconds) owned."""

    tenant: str | None
    task_id: str
    entity: str
    owner: str
    """The owner's attributes as JSON: its owned patterns' arguments."""
    created: float


def new_task(tenant: str | None, w: Writes, owner: Any) -> Task:
    return Task(tenant, new_id(), w.model.__name__, owner.model_dump_json(), time.time())


def record(table: TableDef, task: Task) -> Put:
    """The action recording a task, in the owner's delete."""
    item = {**_key(table, task), "tenant": task.tenant or "", "entity": task.entity}
    item |= {"owner": task.owner, "created": str(task.created)}
    return Put(item, (Condition("not_exists", table.partition_key),))


def _key(table: TableDef, task: Task) -> Key:
    """The task's key: the tasks' partition, sorted by tenant (lint asks for a sort key)."""
    return {table.partition_key: TASKS, str(table.sort_key): f"{task.tenant or ''}#{task.task_id}"}


def _task_of(table: TableDef, item: Item) -> Task:
    task_id = str(item[str(table.sort_key)]).rsplit("#", 1)[1]
    owner, created = str(item["owner"]), float(item["created"])
    return Task(item["tenant"] or None, task_id, str(item["entity"]), owner, created)


async def page(s: Session, w: Writes, task: Task, remover: Remover) -> bool:
    """Removes one page of what the task's owner owned; True once nothing is left (the task
    is then deleted)."""
    owner = w.model.model_validate_json(task.owner)
    scope = () if task.tenant is None else (task.tenant,)
    for owned in w.owned:
        plan = owned.plan(*scope, *(getattr(owner, b) for b in owned.bound), limit=PAGE)
        found = (await s.store.query(plan)).items
        for item in found:
            await _remove(s, task.tenant, w, owned, item, remover)
        if found or (plan.index is not None and not _settled(s, task)):
            return False
    await s.store.delete(Delete(_key(w.table, task)))
    return True


def _settled(s: Session, task: Task) -> bool:
    """Whether an empty read of an index can be trusted for `task`."""
    inline = bool(getattr(s.store, "answers_inline", False))
    return inline or time.time() - task.created >= SETTLE_SECONDS


async def _remove(
    s: Session, tenant: str | None, w: Writes, owned: Owned, item: Item, remover: Remover
) -> None:
    removal = owned.removals.get(str(item.get("_type")), Removal())
    if removal.writes is None:
        await s.store.delete(Delete(w.table.primary_key(item)))
        return
    key = {part: item[attribute] for part, attribute in removal.parts}
    with contextlib.suppress(NotFound):  # removed meanwhile, by another process's page
        await remover(s, tenant, removal.writes(), key)


async def finish(
    s: Session, w: Writes, task: Task, remover: Remover, seconds: float | None = None
) -> bool:
    """Works on the task for up to `seconds` (INLINE_SECONDS) as the table's own
    bookkeeping (no caller: the owner's delete was allowed, so what it owns goes); whether
    it is done. A page that fails leaves the rest to a sweep."""
    deadline = time.monotonic() + (INLINE_SECONDS if seconds is None else seconds)
    own = Session(s.store, s.cursors)
    try:
        while not await page(own, w, task, remover):
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0)
    except Exception:  # the owner is gone already: the rest is a sweep's
        log.warning(
            "task %s of %s failed a page; a sweep goes on", task.task_id, task.entity, exc_info=True
        )
        return False
    return True


async def sweep(
    s: Session, writes: Mapping[str, Writes], remover: Remover, seconds: float
) -> tuple[int, int]:
    """Works on pending tasks (the oldest hundred) for up to `seconds`: (done, left)."""
    owning = [w for w in writes.values() if w.owned]
    if not owning:
        return 0, 0
    table = owning[0].table
    deadline = time.monotonic() + seconds
    plan = Query(partition=TASKS, consistent=True, limit=100)
    pending = [_task_of(table, item) for item in (await s.store.query(plan)).items]
    done = 0
    for task in sorted(pending, key=lambda t: t.created):
        w = writes.get(task.entity)
        left = deadline - time.monotonic()
        if w is not None and left > 0 and await finish(s, w, task, remover, left):
            done += 1
    return done, len(pending) - done

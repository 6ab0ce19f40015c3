"""Work a delete or move leaves after its first transaction, done until it is done.

A large delete first removes the object itself in one transaction (it reads as NOT_FOUND at
once) together with a `CleanupTask` item; the rest (a user's orders, a group's memberships,
an org subtree) is removed afterwards, page by page, each page idempotent. The request that
made the task works on it for a while; what is left goes on in the background, and a
serving app resumes pending tasks when it starts (`resume_at_start`, server/compiled.py),
so a crash or restart only delays the work. A
process frozen between requests (Lambda) has no background: there the request leaves what
is left to a scheduled run (`left_for_schedule`, `work_until`).

Each kind of task registers its runner here (`register`); a runner does a page of the work
and says whether the task is done, and is run again until it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from datetime import UTC, datetime

from generated.keys.cleanup_task import key as task_key
from generated.models.cleanup_task import CleanupTask
from generated.models.enums import CleanupTaskKind
from generated.queries.cleanup_task import cleanup_tasks
from keygraph import deadline as work_deadline
from keygraph.ids import new_id
from keygraph.plan import Condition, Delete, Put
from keygraph.store import Session, Store
from keygraph.stores.view import StoreView

log = logging.getLogger("keygraph.cleanup")

Runner = Callable[[Session, CleanupTask], Awaitable[bool]]
"""Does a page of a task's work; True once nothing is left."""

INLINE_SECONDS = 2.0
"""How long the request that made a task works on it before answering."""
RETRY_PAUSE = 1.0
"""Before a page is tried again after it failed."""
INDEX_SETTLE_SECONDS = 1.0
"""How old a task must be before an empty read of a DynamoDB global secondary index may end
it: an item written just before the task could still be missing from the index."""

_RUNNERS: dict[CleanupTaskKind, Runner] = {}
_RUNNING: set[asyncio.Task[None]] = set()
_LEFT_FOR_SCHEDULE: ContextVar[bool] = ContextVar("keygraph_cleanup_left", default=False)


def register(kind: CleanupTaskKind, runner: Runner) -> None:
    _RUNNERS[kind] = runner


def new_task(
    tenant: str, kind: CleanupTaskKind, subject: str, destination: str | None = None
) -> CleanupTask:
    return CleanupTask(
        task_id=new_id(),
        tenant=tenant,
        kind=kind,
        subject=subject,
        destination=destination,
        created_at=datetime.now(UTC),
    )


def put_task(task: CleanupTask) -> Put:
    """The action recording a task, for the transaction that makes it."""
    return Put(task.to_item(), conditions=(Condition("not_exists", "PK"),))


async def index_settled(s: Session, task: CleanupTask) -> bool:
    """Whether a short read of a global secondary index can end `task`: at once on the
    embedded store (its indexes are written with the item); on DynamoDB once the task is
    INDEX_SETTLE_SECONDS old (False after waiting for that: read the index once more)."""
    if getattr(s.store, "answers_inline", False):
        return True
    wait = INDEX_SETTLE_SECONDS - (datetime.now(UTC) - task.created_at).total_seconds()
    if wait <= 0:
        return True
    await asyncio.sleep(wait)
    return False


async def _step(s: Session, task: CleanupTask) -> bool:
    done = await _RUNNERS[task.kind](s, task)
    if done:
        await s.store.delete(Delete(task_key(task.task_id)))
    return done


def _base(store: Store) -> Store:
    """The store under any request-scoped view: background work outlives its request."""
    while isinstance(store, StoreView):
        store = store.inner
    return store


@contextlib.contextmanager
def left_for_schedule() -> Iterator[None]:
    """Within it, a task `finish` does not end stays pending (its item is durable) for a
    scheduled `work_until`, instead of going on in this process's background: for a process
    frozen once it has answered (Lambda)."""
    token = _LEFT_FOR_SCHEDULE.set(True)
    try:
        yield
    finally:
        _LEFT_FOR_SCHEDULE.reset(token)


async def finish(s: Session, task: CleanupTask) -> bool:
    """Work on a task for up to INLINE_SECONDS; True when it is done, else (also when a page
    fails: the request's own change is made, and answers success) it goes on in the
    background of this process, or waits for the schedule (`left_for_schedule`)."""
    deadline = time.monotonic() + INLINE_SECONDS
    while True:
        try:
            if await _step(s, task):
                return True
        except Exception as exc:  # the object is gone already: the rest is left for later
            log.warning("cleanup %s failed a page inline (%r); left for later", task.task_id, exc)
            _go_on(s, task)
            return False
        if time.monotonic() > deadline:
            _go_on(s, task)
            return False
        await asyncio.sleep(0)  # the embedded store answers without yielding


def _go_on(s: Session, task: CleanupTask) -> None:
    if _LEFT_FOR_SCHEDULE.get():
        log.info("cleanup %s left pending for the scheduled run", task.task_id)
        return
    spawn(Session(_base(s.store), s.cursors), task)


def spawn(s: Session, task: CleanupTask) -> None:
    """Run a task to its end in the background of this process."""

    async def run() -> None:
        while True:
            try:
                if await _step(s, task):
                    return
                await asyncio.sleep(0)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("cleanup %s failed a page; retrying", task.task_id, exc_info=True)
                await asyncio.sleep(RETRY_PAUSE)

    running = asyncio.create_task(work_deadline.unbounded(run()), name=task.task_id)
    _RUNNING.add(running)
    running.add_done_callback(_RUNNING.discard)


async def pending(s: Session) -> list[CleanupTask]:
    """Every task still to finish, oldest first."""
    tasks: list[CleanupTask] = []
    after: str | None = None
    while True:
        page = await cleanup_tasks(s, first=100, after=after)
        tasks.extend(page.items)
        if not page.has_next:
            return tasks
        after = page.cursor


async def resume_all(s: Session) -> int:
    """Start every pending task in the background; how many there were."""
    count = 0
    for task in await pending(s):
        if not any(t.get_name() == task.task_id for t in _RUNNING):
            spawn(s, task)
            count += 1
    return count


async def resume_at_start(s: Session) -> None:
    """Carry on the tasks a stopped server left unfinished, in the background."""
    resumed = await resume_all(s)
    if resumed:
        log.info("resumed %d pending cleanups", resumed)


async def work_until(s: Session, time_left: Callable[[], float]) -> tuple[int, int]:
    """Work on the pending tasks, oldest first, a page at a time while `time_left()` (in
    seconds, asked before each page) is positive: the background of a process that has
    none, run on a schedule. (Tasks done, tasks left); a task whose page fails is left for
    the next run."""
    tasks = await pending(s)
    token = work_deadline.set_at(time.monotonic() + time_left())  # store retries stay inside
    done = 0
    try:
        for task in tasks:
            try:
                done += await _work_on(s, task, time_left)
            except Exception:
                log.warning(
                    "cleanup %s failed a page; left for the next run", task.task_id, exc_info=True
                )
    finally:
        work_deadline.reset(token)
    return done, len(tasks) - done


async def _work_on(s: Session, task: CleanupTask, time_left: Callable[[], float]) -> bool:
    while time_left() > 0:
        if await _step(s, task):
            return True
        await asyncio.sleep(0)
    return False


async def drain() -> None:
    """Wait until this process's background tasks are done."""
    while _RUNNING:
        await asyncio.gather(*list(_RUNNING), return_exceptions=True)


async def stop() -> None:
    """Cancel this process's background tasks (at shutdown; they resume at the next start)."""
    for running in list(_RUNNING):
        running.cancel()
    await asyncio.gather(*list(_RUNNING), return_exceptions=True)

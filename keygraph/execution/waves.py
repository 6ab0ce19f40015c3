"""What resolvers leave awaiting, completed as it settles: a field's completion in the step
its value arrives, what that leaves pending started at once beside everything still running,
so the loads of a whole level reach the request's DataLoaders together. A field with a batch
resolver waits as one pending for all its sources of the step, completed source by source
once the batch answers, without a task per source. Work below a place that a failure nulled
is dropped unstarted, or cancelled."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from inspect import CORO_CREATED, getcoroutinestate, iscoroutine
from typing import Any

from graphql.pyutils import Path

from .plan import FieldPlan


class Place:
    """Where a completed object or list sits in the response, for nulling it later."""

    __slots__ = ("container", "dead", "key", "nullable", "parent", "parted", "path")

    def __init__(
        self,
        parent: Place | None,
        container: dict[str, Any] | list[Any] | None,
        key: str | int,
        path: Path | None,
        nullable: bool,
    ) -> None:
        self.parent = parent
        self.container = container
        self.key = key
        self.path = path
        self.nullable = nullable
        self.dead = False
        self.parted = False
        """A list answered in parts (parts.py)."""


BATCHED = object()
"""The awaitable of a field waiting for its batch resolver's call (`Waves._batch`)."""


@dataclass(slots=True)
class Pending:
    """A field whose resolver returned an awaitable, to complete in the next wave; or, a
    field with a batch resolver, its calls of a step (`entries`, each with its `source`)."""

    field: FieldPlan
    awaitable: Any
    out: dict[str, Any]
    path: Path
    owner: Place
    source: Any = None
    entries: list[Pending] | None = None


class Waves(ABC):
    """The pending and running fields of one execution; `_settled` completes one."""

    ctx: Any
    """The request's context, which batch resolvers are given."""

    def __init__(self) -> None:
        self.pending: list[Pending] = []
        self.running: dict[asyncio.Future[Any], Pending] = {}
        """Tasks completing fields, each with the field it waits on."""
        self.abandoned: set[asyncio.Future[Any]] = set()
        self.idle: asyncio.Future[None] | None = None
        """Set once nothing runs and nothing is pending."""

    @abstractmethod
    def _settled(self, pending: Pending, result: Any) -> None:
        """Completes a pending field with what its awaitable gave (a value or an error)."""

    @abstractmethod
    def _arguments(self, field: FieldPlan) -> dict[str, Any]:
        """The field's arguments as its resolvers take them."""

    def _defer(
        self, field: FieldPlan, source: Any, out: dict[str, Any], path: Path, owner: Place
    ) -> None:
        """Leaves the field of `source` to its batch resolver's next call."""
        out[field.key] = None
        self.pending.append(Pending(field, BATCHED, out, path, owner, source))

    def _batch(self, field: FieldPlan, sources: list[Any]) -> Any:
        """The awaitable of the field's batch resolver for the sources."""
        assert field.batch is not None
        kwargs = self._arguments(field) if field.takes_arguments else {}
        return field.batch(self.ctx, sources, **kwargs)

    def _arrived(self, pending: Pending, result: Any) -> None:
        """Completes the field with what it awaited, or each call of a batch with its own."""
        entries = pending.entries
        if entries is None:
            self._settled(pending, result)
            return
        if isinstance(result, BaseException):
            result = [result] * len(entries)
        for entry, outcome in zip(entries, result, strict=True):
            self._settled(entry, outcome)

    async def _drain(self) -> None:
        """Completes pending fields as their awaitables settle, until none is left. What a
        settled field's completion leaves pending starts at once, beside everything still
        running: fields asked for in the same tick reach the DataLoaders together."""
        while self._drop_dead():
            if len(self.pending) == 1:  # alone: awaited here, without a task
                pending = self.pending.pop()
                self._arrived(pending, await _settle(pending.awaitable))
                continue
            idle = self.idle = asyncio.get_running_loop().create_future()
            self._launch()
            try:
                await idle
            finally:
                for running in list(self.running):
                    self._cancel(running)
                for pending in self.pending:
                    _close(pending.awaitable)

    def _drop_from(self, mark: int) -> None:
        """Drops, unstarted, the fields left pending since `mark`: all below a value that
        failed to complete."""
        for pending in self.pending[mark:]:
            _close(pending.awaitable)
        del self.pending[mark:]

    def _drop_dead(self) -> bool:
        """Drops the pending fields below a nulled place, unstarted, and makes each batched
        field's calls one pending; whether any is left."""
        live = []
        batches: dict[int, Pending] = {}
        for pending in self.pending:
            if _gone(pending):
                _close(pending.awaitable)
            elif pending.awaitable is not BATCHED:
                live.append(pending)
            else:
                batch = batches.get(id(pending.field))
                if batch is None:
                    batch = batches[id(pending.field)] = replace(pending, entries=[])
                    live.append(batch)
                assert batch.entries is not None
                batch.entries.append(pending)
        for batch in batches.values():
            assert batch.entries is not None
            batch.awaitable = self._batch(batch.field, [e.source for e in batch.entries])
        self.pending = live
        return bool(live)

    def _launch(self) -> None:
        self._drop_dead()
        launched, self.pending = self.pending, []
        for pending in launched:
            running = asyncio.ensure_future(self._complete_when_settled(pending))
            self.running[running] = pending
            running.add_done_callback(self._finished)

    async def _complete_when_settled(self, pending: Pending) -> None:
        """Completes the field in the step its value arrives in. What that leaves pending
        starts at once: the first field goes on in this task, the others in tasks of their
        own started before it, so the loads they all ask for go out together."""
        task = asyncio.current_task()
        while True:
            self._arrived(pending, await _settle(pending.awaitable))
            if not self._drop_dead():
                return
            pending = self.pending.pop(0)
            if task is not None:
                self.running[task] = pending
            self._launch()

    def _finished(self, done: asyncio.Future[None]) -> None:
        self.running.pop(done, None)
        idle = self.idle
        if idle is None or idle.done():
            return
        if done.cancelled():
            if done not in self.abandoned:
                idle.set_exception(asyncio.CancelledError())
                return
            self.abandoned.discard(done)
        elif done.exception() is not None:
            idle.set_exception(done.exception())  # type: ignore[arg-type]
            return
        if not self.running:
            idle.set_result(None)

    def _abandon_dead(self) -> None:
        """Cancels the tasks completing fields below a nulled place (not the calling one)."""
        current = asyncio.current_task()
        for task, pending in list(self.running.items()):
            if task is not current and _gone(pending):
                self.abandoned.add(task)
                self._cancel(task)

    def _cancel(self, task: asyncio.Future[Any]) -> None:
        """Cancels a task completing a field, closing the field's awaitable if the task
        never started awaiting it."""
        pending = self.running.get(task)
        task.cancel()
        awaitable = pending.awaitable if pending is not None else None
        if iscoroutine(awaitable) and getcoroutinestate(awaitable) == CORO_CREATED:
            awaitable.close()


def _close(awaitable: Any) -> None:
    """Disposes of a coroutine that will not be awaited (a future may be shared)."""
    if iscoroutine(awaitable):
        awaitable.close()


def _gone(pending: Pending) -> bool:
    """Whether nothing is left to complete: the field is below a nulled place, or each of a
    batch's calls is."""
    if pending.entries is None:
        return is_dead(pending.owner)
    return all(is_dead(entry.owner) for entry in pending.entries)


def is_dead(place: Place | None) -> bool:
    while place is not None:
        if place.dead:
            return True
        place = place.parent
    return False


def in_parts(place: Place | None) -> bool:
    """Whether the place is in a list answered in parts."""
    while place is not None:
        if place.parted:
            return True
        place = place.parent
    return False


async def _settle(awaitable: Any) -> Any:
    try:
        return await awaitable
    except Exception as error:
        return error

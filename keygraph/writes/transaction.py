"""One transaction of a write (`Plan`): its actions, each with what its failed condition
means to the client, and the errors those are (Conflict, NotFound, BadArgument)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from keygraph.errors import BadArgument, CancelReason, Conflict, NotFound, TransactionCanceled
from keygraph.plan import Condition, Item, Key, Put, WriteAction
from keygraph.store import Store

from .bindings import Count, Derived, Parent, Writes

VERSION = "version"
CONDITION_FAILED = "ConditionalCheckFailed"
Failure = Callable[[CancelReason], Exception | None]
"""The error a failed condition of one action means (None: none of the client's)."""


@dataclass
class Plan:
    """One transaction's actions, each with what its failed condition means."""

    w: Writes
    actions: list[WriteAction] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)

    @property
    def absent(self) -> tuple[Condition, ...]:
        return (Condition("not_exists", self.w.table.partition_key),)

    @property
    def present(self) -> tuple[Condition, ...]:
        return (Condition("exists", self.w.table.partition_key),)

    def key(self, item: Item) -> Key:
        return self.w.table.primary_key(item)

    def target(self, action: WriteAction) -> Key:
        """The key of the item an action writes."""
        return self.key(action.item) if isinstance(action, Put) else action.key

    def add(self, action: WriteAction, failure: Failure) -> int:
        """Adds the action unless one already writes its item (a copy that falls on its
        source: a friendship of oneself); its index."""
        if self.target(action) in map(self.target, self.actions):
            return -1
        self.actions.append(action)
        self.failures.append(failure)
        return len(self.actions) - 1

    def drop(self, indexes: list[int]) -> None:
        for index in sorted(indexes, reverse=True):
            del self.actions[index]
            del self.failures[index]

    async def send(self, store: Store) -> None:
        try:
            await store.transact_write(self.actions)
        except TransactionCanceled as exc:
            failed = [i for i, r in enumerate(exc.reasons) if r.code == CONDITION_FAILED]
            missed = [i for i in failed if self.failures[i] is gone and exc.reasons[i].item is None]
            if missed and len(missed) == len(failed):
                raise ParentGone(missed) from exc
            for index in failed:
                error = self.failures[index](exc.reasons[index])
                if error is not None:
                    raise error from exc
            raise Conflict("a concurrent write got in the way; try again") from exc


class ParentGone(Exception):
    """A delete's counts whose parents no longer exist (by action index)."""

    def __init__(self, indexes: list[int]) -> None:
        super().__init__("parents gone")
        self.indexes = indexes


def already(w: Writes) -> Failure:
    return lambda _reason: Conflict(f"that {w.model.__name__} already exists")


def moved(w: Writes) -> Failure:
    """The item changed or went away since it was read."""

    def failure(reason: CancelReason) -> Exception:
        if reason.item is None:
            return NotFound(f"the {w.model.__name__} was deleted meanwhile")
        version = reason.item.get(VERSION)
        current = int(version) if version is not None else None
        return Conflict(f"the {w.model.__name__} changed meanwhile; read it again", current)

    return failure


def still_counts(w: Writes) -> Failure:
    """The item counts others' items still, or changed or went away since it was read."""

    def failure(reason: CancelReason) -> Exception | None:
        held = {c: reason.item.get(c) for c in w.counters} if reason.item is not None else {}
        counting = {c: n for c, n in held.items() if n not in (0, None)}
        if counting:
            shown = ", ".join(f"{c} {n}" for c, n in counting.items())
            return Conflict(f"the {w.model.__name__} still counts items ({shown})")
        return moved(w)(reason)

    return failure


def taken(w: Writes, derived: Derived, model: Any) -> Failure:
    if not derived.unique:
        return lambda _reason: Conflict(f"its {derived.name} copy already exists")
    value = getattr(model, derived.name)
    return lambda _reason: Conflict(f"the {derived.name} {value!r} is already in use")


def full(count: Count) -> Failure:
    def failure(reason: CancelReason) -> Exception:
        if reason.item is None:
            return NotFound(f"no {count.parent} to count it on")
        return BadArgument(f"a {count.parent} holds at most {count.most}")

    return failure


def missing(parent: Parent, model: Any) -> Failure:
    shown = ", ".join(f"{b} {getattr(model, b)!r}" for b in parent.bound)
    return lambda _reason: NotFound(f"no {parent.entity} at {shown}")


def gone(_reason: CancelReason) -> Exception | None:
    return None

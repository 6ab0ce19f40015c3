"""Writing an entity's item with what it keeps, all in one transaction or nothing: create
(nothing there before, its claims free, its counts under their caps), update (against the
version read, moving claims and copies whose keys change) and delete (its claims and
copies with it, its counts lowered). Each refusal is the error a client can act on:
Forbidden, BadArgument, NotFound or Conflict."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError as Invalid

from keygraph.errors import (
    BadArgument,
    CancelReason,
    Conflict,
    Forbidden,
    NotFound,
    TransactionCanceled,
)
from keygraph.ids import new_id
from keygraph.plan import Check, Condition, Delete, Get, Item, Key, Put, Update, WriteAction
from keygraph.store import Session, Store

from .bindings import Count, Derived, Parent, Writes
from .folds import FOLDS

VERSION = "version"
CONDITION_FAILED = "ConditionalCheckFailed"
Failure = Callable[[CancelReason], Exception | None]
"""The error a failed condition of one action means (None: none of the client's)."""
Held = Callable[[Any], Awaitable[Mapping[str, Mapping[str, Any]]]]
"""Given an item, the attributes its derived items hold where the spec now derives others."""


async def create(s: Session, tenant: str | None, w: Writes, values: Mapping[str, Any]) -> Any:
    """Writes a new item of `values` with its claims, copies and counts; Conflict when its
    key or a unique value is taken, NotFound when a parent is missing, BadArgument when a
    count's parent is full."""
    _exists(w, "create")
    fresh = dict.fromkeys(w.counters, 0) | ({VERSION: 1} if w.versioned else {})
    made = {name: _generate(kind) for name, kind in w.generated if values.get(name) is None}
    ttl = w.table.ttl_attribute
    if w.expires_after is not None and ttl is not None and values.get(ttl) is None:
        made[ttl] = int(time.time()) + w.expires_after
    model = _model(w, {**values, **made, **fresh})
    _allow(s, w, "create", model)
    scope = _scope(w, tenant)
    plan = _Plan(w)
    plan.add(Put(_item(model, scope), plan.absent), _already(w))
    for derived in w.derived:
        item = _derived(derived, model, scope)
        if item is not None:
            plan.add(Put(item, plan.absent), _taken(w, derived, model))
    for count in w.counts:
        plan.add(_counted(plan, count, model, scope, 1), _full(count))
    for parent in w.parents:
        key = parent.key(*scope, *_bound(parent.bound, model))
        plan.add(Check(key, plan.present), _missing(parent, model))
    await plan.send(s.store)
    return model


def items_of(tenant: str | None, w: Writes, model: Any) -> list[Item]:
    """The items a create of `model` writes (itself, its claims and copies), for a bulk
    load that writes them without a transaction; its counts are left to the loader."""
    scope = _scope(w, tenant)
    derived = (_derived(d, model, scope) for d in w.derived)
    return [_item(model, scope), *(item for item in derived if item is not None)]


async def update(
    s: Session,
    tenant: str | None,
    w: Writes,
    key: Mapping[str, Any],
    changes: Mapping[str, Any],
    expected_version: int | None = None,
    held: Held | None = None,
) -> Any:
    """Changes the item at `key` (its `parts`) by `changes`, against `expected_version`
    for a versioned entity; moves its claims and copies with it. `held`, given the current
    item, answers by name the attributes of its derived items where they differ from what
    the spec derives now (items written under an older rule), so those are the ones moved."""
    _exists(w, "update")
    fixed = sorted(set(changes) & {*w.fixed, *w.counters})
    if fixed:
        raise BadArgument(f"an update cannot change {', '.join(fixed)}")
    scope = _scope(w, tenant)
    current = await _current(s, w, key, scope)
    _allow(s, w, "update", current)
    _check_version(w, current, expected_version)
    values = {**current.model_dump(), **changes}
    if w.versioned:
        values[VERSION] = current.version + 1
    model = _model(w, values)
    _allow(s, w, "update", model)
    plan = _Plan(w)
    plan.add(_changed(plan, current, model, scope), _moved(w))
    written = await held(current) if held is not None else {}
    for derived in w.derived:
        was = written.get(derived.name, {})
        if not was and all(getattr(current, t) == getattr(model, t) for _, t in derived.fields):
            continue  # nothing it holds changed
        old, new = _derived(derived, current, scope, was), _derived(derived, model, scope)
        moved = old is not None and (new is None or plan.key(old) != plan.key(new))
        if moved and old is not None:
            plan.add(Delete(plan.key(old)), _moved(w))
        if new is not None and new != old:
            conditions = plan.absent if old is None or moved else ()
            plan.add(Put(new, conditions), _taken(w, derived, model))
    await plan.send(s.store)
    return model


async def delete(
    s: Session,
    tenant: str | None,
    w: Writes,
    key: Mapping[str, Any],
    expected_version: int | None = None,
) -> Any:
    """Deletes the item at `key` with its claims and copies, lowering its counts; answers
    the item as it was. An item others' writes count is deleted only while each of its
    counts is 0 (Conflict otherwise), so no count outlives what it counts."""
    _exists(w, "delete")
    scope = _scope(w, tenant)
    current = await _current(s, w, key, scope)
    _allow(s, w, "delete", current)
    if expected_version is not None:
        _check_version(w, current, expected_version)
    plan = _Plan(w)
    counted = tuple(Condition("equals", counter, 0) for counter in w.counters)
    conditions = _unchanged(plan, w, current) + counted
    plan.add(Delete(w.key(*scope, *_parts(w, key)), conditions), _still_counts(w))
    for derived in w.derived:
        item = _derived(derived, current, scope)
        if item is not None:
            plan.add(Delete(plan.key(item)), _moved(w))
    for count in w.counts:
        plan.add(_counted(plan, count, current, scope, -1), _gone)
    while True:
        try:
            await plan.send(s.store)
            return current
        except _ParentGone as gone:  # parents deleted since: nothing left to count on them
            plan.drop(gone.indexes)


@dataclass
class _Plan:
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
            gone = [i for i in failed if self.failures[i] is _gone and exc.reasons[i].item is None]
            if gone and len(gone) == len(failed):
                raise _ParentGone(gone) from exc
            for index in failed:
                error = self.failures[index](exc.reasons[index])
                if error is not None:
                    raise error from exc
            raise Conflict("a concurrent write got in the way; try again") from exc


class _ParentGone(Exception):
    """A delete's counts whose parents no longer exist (by action index)."""

    def __init__(self, indexes: list[int]) -> None:
        super().__init__("parents gone")
        self.indexes = indexes


def _generate(kind: str) -> Any:
    """A generated value: a new id, or the time now."""
    return new_id() if kind == "id" else datetime.now(UTC)


def _exists(w: Writes, operation: str) -> None:
    if operation not in w.operations:
        raise Forbidden(f"{w.model.__name__} takes no {operation}")


def _scope(w: Writes, tenant: str | None) -> tuple[str, ...]:
    if not w.scoped:
        return ()
    if not tenant:
        raise BadArgument(f"a {w.model.__name__} belongs to a tenant: give one")
    return (tenant,)


def _model(w: Writes, values: Mapping[str, Any]) -> Any:
    try:
        return w.model.model_validate(dict(values))
    except Invalid as exc:
        raise BadArgument(_invalid(exc)) from exc


def _invalid(exc: Invalid) -> str:
    """Each refused value: where it is and why."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}" for error in exc.errors()
    )


def _allow(s: Session, w: Writes, operation: str, model: Any) -> None:
    allow = w.allow.get(operation)
    if s.caller is not None and allow is not None and not allow(s.caller, model):
        raise Forbidden(f"not allowed to {operation} this {w.model.__name__}")


def _item(model: Any, scope: tuple[str, ...]) -> Item:
    item: Item = model.to_item(*scope)
    return item


def _parts(w: Writes, key: Mapping[str, Any]) -> list[Any]:
    missing = [part for part in w.parts if key.get(part) in (None, "")]
    if missing:
        raise BadArgument(f"give {', '.join(missing)}")
    return [key[part] for part in w.parts]


async def _current(s: Session, w: Writes, key: Mapping[str, Any], scope: tuple[str, ...]) -> Any:
    item = await s.store.get(Get(w.key(*scope, *_parts(w, key)), consistent=True))
    if item is None:
        raise NotFound(f"no {w.model.__name__} at {_shown(w, key)}")
    return w.model.from_item(item)


def _shown(w: Writes, key: Mapping[str, Any]) -> str:
    return ", ".join(f"{part} {key[part]!r}" for part in w.parts)


def _check_version(w: Writes, current: Any, expected: int | None) -> None:
    if w.versioned and current.version != expected:
        raise Conflict(
            f"the {w.model.__name__} is at version {current.version}, not {expected}",
            current.version,
        )


def _unchanged(plan: _Plan, w: Writes, current: Any) -> tuple[Condition, ...]:
    """The item is still the one read: at its version, or there at all."""
    if w.versioned:
        return (Condition("equals", VERSION, current.version),)
    return plan.present


def _changed(plan: _Plan, current: Any, model: Any, scope: tuple[str, ...]) -> Put | Update:
    """The write of an item from `current` to `model`, on condition it is still the one
    read: the whole item, or, where others' writes keep counts on it, an update of each
    attribute and index key (those gone removed) that leaves the counts to them."""
    new = _item(model, scope)
    if not plan.w.counters:
        return Put(new, _unchanged(plan, plan.w, current))
    old = _item(current, scope)
    key = plan.key(new)
    kept = {*key, *plan.w.counters}
    changed = {name: value for name, value in new.items() if name not in kept}
    gone = tuple(name for name in old if name not in new and name not in kept)
    return Update(key, set=changed, remove=gone, conditions=_unchanged(plan, plan.w, current))


def _derived(
    derived: Derived, source: Any, scope: tuple[str, ...], held: Mapping[str, Any] | None = None
) -> Item | None:
    """The derived item of the source (its attributes in `held` as given), or None while a
    required attribute lacks a value; BadArgument naming the source's attribute when a
    value does not fit the derived item."""
    values = {mine: _value(derived, source, theirs) for mine, theirs in derived.fields}
    values |= held or {}
    required = derived.model.model_fields
    if any(values.get(n) is None and f.is_required() for n, f in required.items()):
        return None
    try:
        model = derived.model.model_validate(values)
    except Invalid as exc:
        raise BadArgument(f"{derived.name}: {_invalid(exc)}") from exc
    return _item(model, scope)


def _value(derived: Derived, source: Any, attribute: str) -> Any:
    """The source's attribute as its derived item holds it: a claim's value folded."""
    value = getattr(source, attribute)
    if derived.fold is not None and attribute == derived.name and isinstance(value, str):
        return FOLDS[derived.fold](value)
    return value


def _bound(bound: tuple[str, ...], model: Any) -> list[Any]:
    return [getattr(model, b) for b in bound]


def _counted(plan: _Plan, count: Count, model: Any, scope: tuple[str, ...], by: int) -> Update:
    key = count.key(*scope, *_bound(count.bound, model))
    conditions = plan.present
    if by > 0:
        conditions += (Condition("less_than", count.attribute, count.most),)
    return Update(key, add={count.attribute: by}, conditions=conditions)


def _already(w: Writes) -> Failure:
    return lambda _reason: Conflict(f"that {w.model.__name__} already exists")


def _moved(w: Writes) -> Failure:
    """The item changed or went away since it was read."""

    def failure(reason: CancelReason) -> Exception:
        if reason.item is None:
            return NotFound(f"the {w.model.__name__} was deleted meanwhile")
        version = reason.item.get(VERSION)
        current = int(version) if version is not None else None
        return Conflict(f"the {w.model.__name__} changed meanwhile; read it again", current)

    return failure


def _still_counts(w: Writes) -> Failure:
    """The item counts others' items still, or changed or went away since it was read."""

    def failure(reason: CancelReason) -> Exception | None:
        held = {c: reason.item.get(c) for c in w.counters} if reason.item is not None else {}
        counting = {c: n for c, n in held.items() if n not in (0, None)}
        if counting:
            shown = ", ".join(f"{c} {n}" for c, n in counting.items())
            return Conflict(f"the {w.model.__name__} still counts items ({shown})")
        return _moved(w)(reason)

    return failure


def _taken(w: Writes, derived: Derived, model: Any) -> Failure:
    if not derived.unique:
        return lambda _reason: Conflict(f"its {derived.name} copy already exists")
    value = getattr(model, derived.name)
    return lambda _reason: Conflict(f"the {derived.name} {value!r} is already in use")


def _full(count: Count) -> Failure:
    def failure(reason: CancelReason) -> Exception:
        if reason.item is None:
            return NotFound(f"no {count.parent} to count it on")
        return BadArgument(f"a {count.parent} holds at most {count.most}")

    return failure


def _missing(parent: Parent, model: Any) -> Failure:
    shown = ", ".join(f"{b} {getattr(model, b)!r}" for b in parent.bound)
    return lambda _reason: NotFound(f"no {parent.entity} at {shown}")


def _gone(_reason: CancelReason) -> Exception | None:
    return None

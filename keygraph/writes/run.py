"""Writing an entity's item with what it keeps, all in one transaction or nothing: create
(nothing there before, its claims free, its counts under their caps), update (against the
version read, moving claims and copies whose keys change) and delete (its claims and
copies with it, its counts lowered, what it owns after it: owned.py). Each refusal is the
error a client can act on: Forbidden, BadArgument, NotFound or Conflict (transaction.py
says which a failed condition is)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError as Invalid

from keygraph.errors import (
    BadArgument,
    Conflict,
    Forbidden,
    NotFound,
)
from keygraph.ids import new_id
from keygraph.plan import Check, Condition, Delete, Get, Item, Put, Update
from keygraph.store import Session

from . import owned
from .bindings import Count, Derived, Writes
from .folds import FOLDS
from .transaction import (
    VERSION,
    ParentGone,
    Plan,
    already,
    full,
    gone,
    missing,
    moved,
    still_counts,
    taken,
)

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
    plan = Plan(w)
    plan.add(Put(_item(model, scope), plan.absent), already(w))
    for derived in w.derived:
        item = _derived(derived, model, scope)
        if item is not None:
            plan.add(Put(item, plan.absent), taken(w, derived, model))
    for count in w.counts:
        plan.add(_counted(plan, count, model, scope, 1), full(count))
    for parent in w.parents:
        key = parent.key(*scope, *_bound(parent.bound, model))
        plan.add(Check(key, plan.present), missing(parent, model))
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
    plan = Plan(w)
    plan.add(_changed(plan, current, model, scope), moved(w))
    written = await held(current) if held is not None else {}
    for derived in w.derived:
        was = written.get(derived.name, {})
        if not was and all(getattr(current, t) == getattr(model, t) for _, t in derived.fields):
            continue  # nothing it holds changed
        old, new = _derived(derived, current, scope, was), _derived(derived, model, scope)
        relocated = old is not None and (new is None or plan.key(old) != plan.key(new))
        if relocated and old is not None:
            plan.add(Delete(plan.key(old)), moved(w))
        if new is not None and new != old:
            conditions = plan.absent if old is None or relocated else ()
            plan.add(Put(new, conditions), taken(w, derived, model))
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
    counts is 0 (Conflict otherwise), so no count outlives what it counts. What it owns
    goes after it: by this call for a while, then by a sweep (owned.py)."""
    _exists(w, "delete")
    scope = _scope(w, tenant)
    current = await _current(s, w, key, scope)
    _allow(s, w, "delete", current)
    if expected_version is not None:
        _check_version(w, current, expected_version)
    plan = Plan(w)
    counted = tuple(Condition("equals", counter, 0) for counter in w.counters)
    conditions = _unchanged(plan, w, current) + counted
    plan.add(Delete(w.key(*scope, *_parts(w, key)), conditions), still_counts(w))
    for derived in w.derived:
        item = _derived(derived, current, scope)
        if item is not None:
            plan.add(Delete(plan.key(item)), moved(w))
    for count in w.counts:
        plan.add(_counted(plan, count, current, scope, -1), gone)
    task = owned.new_task(tenant if w.scoped else None, w, current) if w.owned else None
    if task is not None:
        plan.add(owned.record(w.table, task), already(w))
    while True:
        try:
            await plan.send(s.store)
            break
        except ParentGone as parents:  # deleted since: nothing left to count on them
            plan.drop(parents.indexes)
    if task is not None:
        await owned.finish(s, w, task, delete)
    return current


async def sweep(s: Session, writes: Mapping[str, Writes], seconds: float) -> tuple[int, int]:
    """Works for up to `seconds` on what owners' deletes left to remove: (tasks done,
    tasks left). `keygraph serve` runs it now and then; a scheduled function can."""
    return await owned.sweep(s, writes, delete, seconds)


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


def _unchanged(plan: Plan, w: Writes, current: Any) -> tuple[Condition, ...]:
    """The item is still the one read: at its version, or there at all."""
    if w.versioned:
        return (Condition("equals", VERSION, current.version),)
    return plan.present


def _changed(plan: Plan, current: Any, model: Any, scope: tuple[str, ...]) -> Put | Update:
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
    removed = tuple(name for name in old if name not in new and name not in kept)
    return Update(key, set=changed, remove=removed, conditions=_unchanged(plan, plan.w, current))


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


def _counted(plan: Plan, count: Count, model: Any, scope: tuple[str, ...], by: int) -> Update:
    key = count.key(*scope, *_bound(count.bound, model))
    conditions = plan.present
    if by > 0:
        conditions += (Condition("less_than", count.attribute, count.most),)
    return Update(key, add={count.attribute: by}, conditions=conditions)

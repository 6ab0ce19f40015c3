"""One item against the spec: what a backfill must write so that it is stored as the spec now
stores it (every index key and attribute as the spec computes them), and the condition that
keeps the write from overwriting a newer version of the item.

Pure functions: the plan counts with them, the run writes what they return.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from keygraph.entity import EntityDef
from keygraph.errors import BadArgument
from keygraph.plan import Condition, Item, Update

from .target import Target


class PrimaryKeyChanged(Exception):
    """The spec computes another primary key for a stored item (or cannot parse the one it
    has): not an online change."""

    def __init__(self, entity: str, old: Mapping[str, str], new: Mapping[str, str] | None) -> None:
        where = "a key this spec does not build" if new is None else f"would move to {dict(new)}"
        super().__init__(f"{entity} at {dict(old)}: {where}")
        self.entity = entity


class Unreadable(Exception):
    """A stored item the spec cannot read (a required attribute it lacks, a value out of
    range): the spec change needs a data fix the migration cannot make."""

    def __init__(self, entity: str, key: Mapping[str, str], reason: str) -> None:
        super().__init__(f"{entity} {dict(key)}: {reason}")
        self.entity, self.key, self.reason = entity, dict(key), reason


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one item needs: nothing (`update` None), or `update`; `entity` names its entity
    (None for an item of no entity of the spec, left as it is)."""

    entity: str | None
    update: Update | None = None
    changed: tuple[str, ...] = ()
    """The attributes the update sets or removes."""


def _conditions(
    entity: EntityDef, item: Mapping[str, Any], keys: set[str]
) -> tuple[Condition, ...]:
    """The item must still be the one read: its version, or (an unversioned entity, or an
    item stored before its entity had a version) every attribute that is not a key."""
    if entity.versioned and "version" in item:
        return (Condition("equals", "version", item["version"]),)
    same = tuple(
        Condition("equals", name, value) for name, value in sorted(item.items()) if name not in keys
    )
    return (*same, Condition("not_exists", "version")) if entity.versioned else same


def judge(target: Target, item: Item) -> Verdict:
    """What `item` needs to be stored as `target` stores it. Raises PrimaryKeyChanged or
    Unreadable when no online write can get it there."""
    table = target.table
    entity = target.entities.get(str(item.get("_type")))
    if entity is None:
        return Verdict(None)
    key = table.primary_key(item)
    try:
        model = entity.read(item)
    except Exception as exc:  # whatever the model refuses is reported as data
        raise Unreadable(entity.name, key, str(exc).splitlines()[0]) from exc
    try:
        tenant = entity.tenant_of(item)
    except BadArgument as exc:
        raise PrimaryKeyChanged(entity.name, key, None) from exc
    rebuilt = entity.store(model, tenant)
    if table.primary_key(rebuilt) != key:
        raise PrimaryKeyChanged(entity.name, key, table.primary_key(rebuilt))
    keys = {table.partition_key, table.sort_key, *target.index_keys}
    sets = {name: value for name, value in rebuilt.items() if item.get(name) != value}
    sets.pop(table.partition_key, None)
    sets.pop(table.sort_key, None)
    removes = tuple(name for name in target.index_keys if name in item and name not in rebuilt)
    if not sets and not removes:
        return Verdict(entity.name)
    update = Update(key, set=sets, remove=removes, conditions=_conditions(entity, item, keys))
    return Verdict(entity.name, update, tuple(sorted([*sets, *removes])))

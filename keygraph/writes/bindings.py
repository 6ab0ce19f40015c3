"""What a generated package declares of an entity's writes: its model and key, which
writes exist and who may make them, the items written with it (unique values' claims and
copies) and the counts it keeps on parent items. Codegen writes them (api.py); run.py
reads them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from keygraph.caller import Caller
from keygraph.plan import Key, Query, TableDef

Allow = Callable[[Caller, Any], bool]
"""Whether the caller may make a write of an item (its model, as it is or will be)."""


@dataclass(frozen=True, slots=True)
class Derived:
    """An item written, moved and deleted with its source's, in the same transaction:
    `fields` pairs each of its attributes with the source's. It exists while every one of
    its required attributes has a value. A `unique` one is a claim: its key holds the value
    alone, so a second item with that value is refused; a `fold` (folds.py) is applied to
    the value before it keys the claim."""

    name: str
    model: Any
    fields: tuple[tuple[str, str], ...]
    unique: bool = False
    fold: str | None = None


@dataclass(frozen=True, slots=True)
class Parent:
    """An item that must exist when the source's is created: `key` builds its key from the
    source's `bound` attributes (after the tenant, for a tenant's entity)."""

    entity: str
    key: Callable[..., Key]
    bound: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Count:
    """A parent item's count, raised with each item written and lowered with each deleted,
    never above `most`: `key` builds the parent's key from the source's `bound`
    attributes (after the tenant, for a tenant's entity)."""

    parent: str
    key: Callable[..., Key]
    bound: tuple[str, ...]
    attribute: str
    most: int


@dataclass(frozen=True, slots=True)
class Removal:
    """How an item an owned pattern finds is removed: by the delete of `writes` (its own
    entity's, or its source's when it is a copy), at the key `parts` gives from the found
    item's attributes (part, attribute); alone when `writes` is None."""

    writes: Callable[[], Writes] | None = None
    parts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Owned:
    """Items deleted after their owner (owned.py): those `plan` finds (a pattern's query
    plan, its key arguments the owner's `bound` attributes after the tenant), removed as
    `removals` says by their type discriminator."""

    name: str
    plan: Callable[..., Query]
    bound: tuple[str, ...]
    removals: Mapping[str, Removal] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Writes:
    """An entity's writes: `key` builds its primary key from the `parts` attributes (after
    the tenant when `scoped`); `operations` the writes that exist; `allow` who may make
    each; a `versioned` entity is created at version 1 and updated against the version
    its writer read."""

    model: Any
    """The entity's pydantic model class (with `to_item` and `from_item`)."""
    table: TableDef
    key: Callable[..., Key]
    parts: tuple[str, ...]
    operations: frozenset[str]
    scoped: bool = True
    versioned: bool = False
    allow: Mapping[str, Allow] = field(default_factory=dict)
    derived: tuple[Derived, ...] = ()
    counts: tuple[Count, ...] = ()
    counters: tuple[str, ...] = ()
    """Its attributes other entities' writes count: 0 when created, left to those writes
    by its updates."""
    generated: tuple[tuple[str, str], ...] = ()
    """Its attributes the creating write sets when not given: a new id ("id") or the time
    of the write ("now"); no update changes them."""
    parents: tuple[Parent, ...] = ()
    owned: tuple[Owned, ...] = ()
    """What its delete leaves a task to remove after it."""
    expires_after: int | None = None
    """Seconds after its creation an item expires: the create sets the table's TTL attribute
    to then (epoch seconds) unless given."""

    @property
    def fixed(self) -> tuple[str, ...]:
        """What an update cannot change: its key's parts, what finds its counts' and
        parents' items, and what the creating write generated."""
        counted = (b for count in self.counts for b in count.bound)
        required = (b for parent in self.parents for b in parent.bound)
        made = (name for name, _ in self.generated)
        return tuple(dict.fromkeys([*self.parts, *counted, *required, *made]))

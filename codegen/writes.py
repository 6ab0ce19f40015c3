"""An entity's writes, as lowering and the checks read them from the spec: the items written
with each of its items (unique values' claims and copies, their attributes from its own),
the counts it keeps under a cap on parent items, and what an update may not change."""

from __future__ import annotations

from dataclasses import dataclass

from .pattern_params import key_params, query_params
from .resolve import Entity, Resolved
from .spec import DerivedSpec, ParentSpec

VERSION = "version"
"""The attribute that makes an entity versioned: created at 1, checked and raised by one on
each update."""


@dataclass(frozen=True, slots=True)
class Derived:
    """An item written, moved and deleted with its source's: `fields` pairs each of its
    attributes with the source's; `unique` for a claim on a value."""

    kind: str
    """"unique" or "copies": where the spec declares it."""
    name: str
    entity: str
    fields: tuple[tuple[str, str], ...]
    fold: str | None = None
    """How a claim's value is folded before it keys the claim ("casefold"), if at all."""

    @property
    def unique(self) -> bool:
        return self.kind == "unique"

    @property
    def path(self) -> str:
        return f"{self.kind}.{self.name}"


@dataclass(frozen=True, slots=True)
class Count:
    """A parent's count kept with the source's items: the source's attributes giving the
    parent's key (in its key function's order), the count's attribute and cap."""

    name: str
    parent: str
    bound: tuple[str, ...]
    attribute: str
    most: int


def derived_fields(resolved: Resolved, source: Entity, spec: DerivedSpec) -> dict[str, str]:
    """What the derived item's attributes come from: the spec's args, then each of the
    derived entity's attributes the source has by the same name."""
    target = resolved.entities[spec.entity]
    same = {name: name for name in target.attrs if name in source.attrs}
    return same | spec.args


def derived_of(resolved: Resolved, entity: Entity) -> list[Derived]:
    """The entity's claims then its copies, as the spec declares them (checked)."""
    found = []
    for kind, specs in (("unique", entity.spec.unique), ("copies", entity.spec.copies)):
        for name, spec in specs.items():
            fields = tuple(sorted(derived_fields(resolved, entity, spec).items()))
            found.append(Derived(kind, name, spec.entity, fields, spec.fold))
    return found


@dataclass(frozen=True, slots=True)
class Parent:
    """An item that must exist when the source's is created: the source's attributes giving
    its key, in its key function's order."""

    name: str
    entity: str
    bound: tuple[str, ...]


def bound_of(resolved: Resolved, spec: ParentSpec) -> tuple[str, ...]:
    """The source's attributes giving a parent's key parts, in its key function's order."""
    return tuple(spec.args.get(p.name, p.name) for p in key_params(resolved, spec.entity))


def counts_of(resolved: Resolved, entity: Entity) -> list[Count]:
    found = []
    for name, spec in entity.spec.counts.items():
        bound = bound_of(resolved, ParentSpec(entity=spec.entity, args=spec.args))
        found.append(Count(name, spec.entity, bound, spec.attribute, spec.max))
    return found


def parents_of(resolved: Resolved, entity: Entity) -> list[Parent]:
    return [
        Parent(name, spec.entity, bound_of(resolved, spec))
        for name, spec in entity.spec.requires.items()
    ]


def counters_of(resolved: Resolved, entity: Entity) -> list[str]:
    """Its attributes that other entities' writes count: 0 when it is created, never
    written by its own updates."""
    counted = (
        count.attribute
        for other in resolved.entities.values()
        for count in other.spec.counts.values()
        if count.entity == entity.name
    )
    return list(dict.fromkeys(counted))


SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def expiry_of(entity: Entity) -> int | None:
    """The seconds after its creation an item expires, if the spec says."""
    after = entity.spec.expires_after
    return None if after is None else int(after[:-1]) * SECONDS[after[-1]]


def generated_of(entity: Entity) -> list[tuple[str, str]]:
    """Its attributes the creating write sets (name, "id" or "now")."""
    return [(n, str(a.spec.generated)) for n, a in entity.attrs.items() if a.spec.generated]


def fixed(resolved: Resolved, entity: Entity) -> list[str]:
    """The attributes an update cannot change: its key's, those a count's or a required
    parent's key is found by, and the generated ones."""
    parts = [p.name for p in key_params(resolved, entity.name)]
    counted = [b for count in counts_of(resolved, entity) for b in count.bound]
    counted += [b for parent in parents_of(resolved, entity) for b in parent.bound]
    generated = [name for name, _ in generated_of(entity)]
    return parts + [b for b in dict.fromkeys(counted + generated) if b not in parts]


@dataclass(frozen=True, slots=True)
class Removal:
    """How an owned item of one type is removed: by the delete of `by` (its entity, or the
    source it is a copy of) at the key `parts` gives from its attributes, or alone (None)."""

    type: str
    by: str | None
    parts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Owned:
    """Items deleted after the owner: what `pattern` finds, its arguments the owner's
    `bound` attributes in the pattern's order, each found type removed as `removals` say."""

    name: str
    pattern: str
    bound: tuple[str, ...]
    removals: tuple[Removal, ...]


def owned_of(resolved: Resolved, entity: Entity) -> list[Owned]:
    found = []
    for name, spec in entity.spec.owns.items():
        bound = tuple(spec.args.get(p.name, p.name) for p in query_params(resolved, spec.pattern))
        returns = resolved.spec.patterns[spec.pattern].returns
        removals = tuple(removal_of(resolved, t) for t in returns)
        found.append(Owned(name, spec.pattern, bound, removals))
    return found


def removal_of(resolved: Resolved, name: str) -> Removal:
    """How an item of entity `name` is removed with what it keeps: by its own delete, by
    the delete of the source it is a copy of, or alone."""
    entity = resolved.entities[name]
    if "delete" in entity.spec.writes:
        parts = tuple((p.name, p.name) for p in key_params(resolved, name))
        return Removal(entity.spec.type, name, parts)
    for source in resolved.entities.values():
        if "delete" not in source.spec.writes:
            continue
        for copy in source.spec.copies.values():
            if copy.entity == name:
                mine = {
                    theirs: its for its, theirs in derived_fields(resolved, source, copy).items()
                }
                parts = tuple(
                    (p.name, mine.get(p.name, "")) for p in key_params(resolved, source.name)
                )
                return Removal(entity.spec.type, source.name, parts)
    return Removal(entity.spec.type, None)


def actions_at_most(entity: Entity) -> int:
    """The most actions one of its writes sends in its transaction: the item, each derived
    item twice (an update moves it), each count and each parent's check, and a task for
    what it owns."""
    spec = entity.spec
    kept = 2 * (len(spec.unique) + len(spec.copies)) + len(spec.counts) + len(spec.requires)
    return 1 + kept + (1 if spec.owns else 0)

"""Relations between types, as lowering reads them from a checked spec: each relation's
pattern, the key arguments its parent's attributes give and those left to the field, the
rule its pattern is run under, and the batch get that loads a get relation's items many at
a time."""

from __future__ import annotations

from dataclasses import dataclass

from . import rules
from .authz import collect
from .implication import implies
from .pattern_params import pattern_params
from .pytypes import KeyVar
from .resolve import Attr, Resolved

SCALAR_KEYS = frozenset({"id", "string"})
"""Argument types that take any text: an id and a string fit each other."""


@dataclass(frozen=True, slots=True)
class Relation:
    """One relation of an entity: `bound` pairs each key argument it gives with the
    parent's attribute (a batch get's one argument with a list attribute); `free` are a
    query's other key arguments, which the field takes."""

    entity: str
    name: str
    pattern: str
    operation: str
    description: str
    bound: tuple[tuple[KeyVar, Attr], ...]
    free: tuple[KeyVar, ...]
    via: str | None = None
    """The relation of each returned item whose answer the field shows in its place."""
    listed: bool = False
    """Whether the field answers a list of the first page, not a connection."""
    first_page: str | None = None
    """The parent's list attribute the first page comes from, with no read."""
    required: bool = False
    """Whether the spec declares the field non-null (`nullable = false`)."""
    ranged: str | None = None
    """The pattern reading the same items in a range, which optional arguments choose."""
    bounds: tuple[KeyVar, ...] = ()
    """Its arguments beyond the relation's own pattern's: the range's bounds."""

    @property
    def optional(self) -> bool:
        """Whether a parent may lack a bound attribute (then the field is null)."""
        return any(attr.spec.optional for _, attr in self.bound)


def relations_of(resolved: Resolved, entity_name: str) -> list[Relation]:
    """The entity's relations, as the spec declares them; the spec is checked
    (relation_checks.py)."""
    entity = resolved.entities[entity_name]
    found = []
    for name, spec in entity.spec.relations.items():
        pattern = resolved.spec.patterns[spec.pattern]
        params = pattern_params(resolved, spec.pattern)
        bound = tuple((p, entity.attrs[spec.args[p.name]]) for p in params if p.name in spec.args)
        free = tuple(p for p in params if p.name not in spec.args)
        description = spec.description or pattern.description
        found.append(
            Relation(
                entity_name,
                name,
                spec.pattern,
                pattern.operation,
                description,
                bound,
                free,
                spec.via,
                spec.list,
                spec.first_page,
                spec.nullable is False,
                spec.ranged,
                _bounds(resolved, spec.pattern, spec.ranged),
            )
        )
    return found


def _bounds(resolved: Resolved, pattern: str, ranged: str | None) -> tuple[KeyVar, ...]:
    """A ranged pattern's arguments beyond the pattern's (checked: relation_checks.py)."""
    if ranged is None or ranged not in resolved.spec.patterns:
        return ()
    own = {p.name for p in pattern_params(resolved, pattern)}
    return tuple(p for p in pattern_params(resolved, ranged) if p.name not in own)


def misfit(attr: Attr, var: KeyVar, listed: bool) -> str | None:
    """Why the attribute cannot give the key argument (`listed`: one value of it for each
    of its items, as a batch get's); None when it can."""
    spec = attr.spec
    if listed:
        if spec.type != "list" or spec.of not in SCALAR_KEYS or var.type not in SCALAR_KEYS:
            return "a batch_get relation gives its key argument from a list of ids or strings"
        return None
    kind = spec.type
    if var.type in SCALAR_KEYS and kind in SCALAR_KEYS:
        return None
    if kind != var.type:
        return f"it is {_a(kind)}, the argument {_a(var.type)}"
    if kind == "enum" and not set(spec.values or ()) <= set(var.values):
        return "it has values the argument's enum does not"
    if kind == "int" and var.width is not None and not _within(attr, var.width):
        return f"it may have more digits than the argument's width {var.width}"
    return None


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _within(attr: Attr, width: int) -> bool:
    spec = attr.spec
    if spec.width is not None:
        return spec.width <= width
    return spec.ge is not None and spec.le is not None and spec.ge >= 0 and spec.le < 10**width


def pattern_rules(resolved: Resolved) -> dict[str, rules.Rule]:
    """Each pattern's rule, named rules expanded; empty for a spec without rules."""
    checked, _ = collect(resolved)
    return {} if checked is None else dict(checked.patterns)


def refusable(rule: rules.Rule | None) -> bool:
    """Whether the rule can refuse a caller (a rule other than `anyone`)."""
    return rule is not None and rule != rules.Const(True)


def batch_for(resolved: Resolved, get: str) -> str | None:
    """The batch get that loads a get relation's items with others of its turn: one of the
    same entity whose rule allows every caller the get's allows (both ask their own)."""
    spec = resolved.spec
    entity = spec.patterns[get].entity
    found = pattern_rules(resolved)
    bound = frozenset(p.name for p in pattern_params(resolved, get))
    for name, pattern in sorted(spec.patterns.items()):
        if pattern.operation != "batch_get" or pattern.entity != entity:
            continue
        mine, theirs = found.get(get), found.get(name)
        if mine is None or theirs is None or implies(mine, theirs, bound):
            return name
    return None

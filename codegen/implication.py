"""Whether one rule allows only what another allows: a pattern's rule against the read
rules of the entities it returns. Decided over every truth assignment of the conditions
the two rules test (a handful), each condition true or false independently; an owner
condition of the entity is the pattern's own when the pattern's key binds that attribute,
and otherwise unknown before the read."""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from . import rules
from .rules import Rule

_MOST_CONDITIONS = 16
"""Past this many conditions the check is not made (2**16 assignments)."""

Atom = tuple[str, str]


def _atoms(rule: Rule, side: str, bound: frozenset[str]) -> set[Atom]:
    found: set[Atom] = set()
    for part in rules.walk(rule):
        atom = _atom(part, side, bound)
        if atom is not None:
            found.add(atom)
    return found


def _atom(part: Rule, side: str, bound: frozenset[str]) -> Atom | None:
    if isinstance(part, rules.Role):
        return ("role", part.name)
    if isinstance(part, rules.Claim):
        return ("claim", f"{part.name}{'=' if part.equal else '!='}{part.value}")
    if isinstance(part, rules.Owner):
        shared = side == "pattern" or part.attribute in bound
        return ("owner", part.attribute) if shared else ("unbound owner", part.attribute)
    return None


def _holds(rule: Rule, side: str, bound: frozenset[str], truth: Mapping[Atom, bool]) -> bool:
    if isinstance(rule, rules.Const):
        return rule.value
    if isinstance(rule, rules.Not):
        return not _holds(rule.operand, side, bound, truth)
    if isinstance(rule, rules.AllOf):
        return all(_holds(o, side, bound, truth) for o in rule.operands)
    if isinstance(rule, rules.AnyOf):
        return any(_holds(o, side, bound, truth) for o in rule.operands)
    atom = _atom(rule, side, bound)
    assert atom is not None, rule
    return truth[atom]


def implies(pattern: Rule, entity: Rule, bound: frozenset[str]) -> bool:
    """Whether every caller `pattern` allows, `entity` allows too, whatever the item read
    (named rules expanded; `bound`: the attributes the pattern's key binds)."""
    atoms = sorted(_atoms(pattern, "pattern", bound) | _atoms(entity, "entity", bound))
    if len(atoms) > _MOST_CONDITIONS:
        return True
    for values in itertools.product((False, True), repeat=len(atoms)):
        truth = dict(zip(atoms, values, strict=True))
        if _holds(pattern, "pattern", bound, truth) and not _holds(entity, "entity", bound, truth):
            return False
    return True

"""The attributes with read rules of their own: a field of the API that shows one answers
null with FORBIDDEN to a caller its guard refuses, so the field is nullable and its binding
names the guard (generated/authz.py) and the attributes the rule's owner conditions read."""

from __future__ import annotations

from dataclasses import dataclass

from . import rules
from .authz import collect
from .pytypes import snake
from .resolve import Resolved


@dataclass(frozen=True, slots=True)
class FieldGuard:
    function: str
    owners: tuple[str, ...]


def field_guards(resolved: Resolved) -> dict[tuple[str, str], FieldGuard]:
    """(entity, attribute) -> the guard of its own read rule."""
    checked, _ = collect(resolved)
    if checked is None:
        return {}
    return {
        (entity, attribute): FieldGuard(
            f"may_read_{snake(entity)}_{attribute}", tuple(rules.owners(rule))
        )
        for (entity, attribute), rule in checked.attributes.items()
    }

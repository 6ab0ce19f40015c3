"""How far a pattern's key template follows an entity's: segment by segment, literals equal,
placeholders the same or of one kind (an arg standing for an attribute), a literal only
where the key has an enum of which it is a value, or an id or string the literal is a valid
value of (the pattern fixes it), a prefix_of arg only last."""

from __future__ import annotations

import re
from collections.abc import Callable

from .keytemplate import Template
from .pytypes import KeyVar
from .resolve import Entity
from .spec import PatternSpec

Lookup = Callable[[str], KeyVar | None]


def lookup_in(pattern: PatternSpec, entity: Entity) -> Lookup:
    """Placeholder name -> its KeyVar: the pattern's arg of that name, else the entity's."""

    def lookup(name: str) -> KeyVar | None:
        arg = pattern.args.get(name)
        return KeyVar(name, arg.type, arg.width) if arg else entity.var(name)

    return lookup


def same_kind(a: KeyVar, b: KeyVar) -> bool:
    """Whether two placeholders hold values of one kind (ids and strings are one)."""
    text = {"id", "string"}
    return (a.type in text and b.type in text) or (a.type == b.type and a.width == b.width)


def enum_values(entity: Entity, name: str) -> tuple[str, ...]:
    """The values of `entity`'s enum attribute `name`; none for another placeholder."""
    var = entity.var(name)
    return var.values if var is not None and var.type == "enum" else ()


def fixes(entity: Entity, name: str, literal: str) -> bool:
    """Whether the literal is a value `entity`'s id or string attribute `name` may hold, so
    that a pattern may fix it (a root's parent_ref "ROOT")."""
    attr = entity.attrs.get(name)
    if attr is None or attr.spec.type not in ("id", "string") or literal.lower() == name:
        return False  # the placeholder's own name: its braces left out
    spec = attr.spec
    if spec.min_length is not None and len(literal) < spec.min_length:
        return False
    if spec.max_length is not None and len(literal) > spec.max_length:
        return False
    return spec.pattern is None or re.search(spec.pattern, literal) is not None


def structural(
    pattern: PatternSpec, want: Template, have: Template, entity: Entity
) -> tuple[int, str | None]:
    """How many leading segments of `have` the pattern template `want` matches, and why it
    stops early (None when every segment of `want` matched)."""
    for i, segment in enumerate(want.segments):
        if i >= len(have.segments):
            return i, f"is longer than {entity.name}'s {have.source!r}"
        target = have.segments[i]
        if segment.literal is not None and target.literal is None:
            values = enum_values(entity, str(target.placeholder))
            if segment.literal in values:  # the enum's value, fixed by the pattern
                continue
            if fixes(entity, str(target.placeholder), segment.literal):
                continue
            if values:
                return i, (
                    f"has {segment.text!r} where {entity.name}'s {have.source!r} has "
                    f"{target.text}, an enum whose values are {', '.join(values)}"
                )
        if segment.literal is not None or target.literal is not None:
            if segment.literal != target.literal:
                return i, (
                    f"has {segment.text!r} where {entity.name}'s {have.source!r} "
                    f"has {target.text!r}"
                )
            continue
        name, theirs = str(segment.placeholder), str(target.placeholder)
        arg = pattern.args.get(name)
        if arg is not None and arg.prefix_of is not None:
            if arg.prefix_of != theirs or i != len(want.segments) - 1 or want.trailing_delimiter:
                return i, (
                    f"may use prefix_of arg {{{name}}} only as its last segment (no '#' "
                    f"after it), at {{{arg.prefix_of}}}"
                )
            continue
        mine, other = lookup_in(pattern, entity)(name), entity.var(theirs)
        if name != theirs and not (arg and mine and other and same_kind(mine, other)):
            return i, f"has {{{name}}} where {entity.name}'s {have.source!r} has {{{theirs}}}"
    return len(want.segments), None

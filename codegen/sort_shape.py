"""The shape of an eq or begins_with sort condition, judged once per pattern over every entity
it returns, with the fix that keeps what the pattern reads: a collection for an item and the
items below it, a trailing '#' for the items below a value, eq for one item."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from . import fixes
from .diagnostics import Edit, Problem
from .keytemplate import Template
from .lower_queries import sort_templates
from .resolve import Resolved
from .spec import PatternSpec
from .structural import lookup_in, structural

_FIXED_WIDTH = ("int", "date", "datetime")
"""Placeholders whose values all have one length in a key."""


@dataclass(slots=True)
class _Reach:
    """Which returned entities a condition's value is the whole sort key of (heads), which
    it is only the start of (below), and which it stops inside a path value of."""

    heads: list[str] = field(default_factory=list)
    below: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


def _reach(pattern: PatternSpec, cond: Template, sk: str, resolved: Resolved) -> _Reach | None:
    """None when some entity's key does not follow the condition (reported elsewhere)."""
    reach = _Reach()
    for name in pattern.returns:
        entity = resolved.entities[name]
        have = entity.keys.get(sk)
        if have is None:
            continue
        matched, why = structural(pattern, cond, have, entity)
        if why is not None:
            return None
        if matched < len(have.segments):
            reach.below.append(name)
            continue
        reach.heads.append(name)
        last = entity.var(str(have.segments[-1].placeholder))
        if last is not None and last.type == "path":
            reach.paths.append(name)
    return reach


def _names(names: list[str]) -> str:
    """Entity names as a sentence lists them."""
    return " and ".join(names) if len(names) < 3 else ", ".join(names)


def check_sort_shape(path: str, pattern: PatternSpec, resolved: Resolved) -> Iterator[Problem]:
    """One problem for an eq or begins_with condition that does not read what its entities'
    keys say it should, with the condition that does."""
    op, conditions = sort_templates(pattern.sort)
    keys = resolved.index_keys(pattern.index)
    if op not in ("eq", "begins_with") or keys is None or keys[1] is None:
        return
    cond = conditions[0]
    reach = _reach(pattern, cond, keys[1], resolved)
    if reach is None:
        return
    body = cond.source.removesuffix("#") if cond.trailing_delimiter else cond.source
    where, section = f"{path}.sort.{op}", path
    if op == "eq":
        yield from _eq(where, section, cond, body, reach)
        return
    last = cond.segments[-1].placeholder
    arg = pattern.args.get(last or "")
    if arg is not None and arg.prefix_of is not None:
        return
    if cond.trailing_delimiter:
        stuck = [n for n in reach.heads if n not in reach.paths]
        if stuck:
            yield _past_the_end(where, section, cond, body, stuck, reach)
        return
    var = lookup_in(pattern, resolved.entities[pattern.returns[0]])(last) if last else None
    longer = _longer(cond, var.type if var else None)
    if reach.heads:
        yield Problem(
            where,
            f"the prefix {cond.source!r} does not end at '#', {longer}; it is "
            f"{_names(reach.heads)}'s whole sort key, and ending it with '#' would leave "
            "that item out: to read the item and the items keyed below it, make the "
            "condition a collection",
            fix=(Edit(section, "sort", fixes.sort("collection", cond.source)),),
        )
        return
    advice = "end it with '#' to read what is keyed below it"
    if last is not None and last in pattern.args:
        advice += (
            f", or, if {{{last}}} is meant to be the start of a value (a geohash prefix), "
            f'declare args.{last}.prefix_of = "<attribute>"'
        )
    elif last is not None and (var is None or var.type not in _FIXED_WIDTH):
        advice += (
            f" (to match the start of {{{last}}}, as of a geohash, use an arg declared "
            f'prefix_of = "{last}" in its place)'
        )
    yield Problem(
        where,
        f"the prefix {cond.source!r} does not end at '#', {longer}: {advice}",
        fix=(Edit(section, "sort", fixes.sort("begins_with", cond.source + "#")),),
    )


def _longer(cond: Template, kind: str | None) -> str:
    """Why a prefix must end at '#': an example of a longer value it would match."""
    last = cond.segments[-1]
    if last.literal is not None:
        example = f"{last.literal!r} also matches {last.literal + 'S'!r}"
    elif kind in _FIXED_WIDTH:
        return "where every prefix query ends, so that none can match a longer value"
    else:
        example = f"{{{last.placeholder}}} 'a' also matches 'ab'"
    return f"so it would also match longer values ({example})"


def _eq(where: str, section: str, cond: Template, body: str, reach: _Reach) -> Iterator[Problem]:
    """eq matches a whole sort key: not one ending in '#', nor only the start of one."""
    if not reach.below and not cond.trailing_delimiter:
        return
    if reach.heads and reach.below:
        yield Problem(
            where,
            f"eq {cond.source!r} reads only {_names(reach.heads)}, not the "
            f"{_names(reach.below)} items keyed below it: to read the item and the items "
            "below it, make the condition a collection",
            fix=(Edit(section, "sort", fixes.sort("collection", body)),),
        )
    elif reach.heads:
        yield Problem(
            where,
            f"eq {cond.source!r} ends with '#', which no sort key does: drop the '#'",
            fix=(Edit(section, "sort", fixes.sort("eq", body)),),
        )
    else:
        yield Problem(
            where,
            f"eq {cond.source!r} is only the start of {_names(reach.below)}'s sort key, so "
            "it matches no item: read the items keyed below it with begins_with",
            fix=(Edit(section, "sort", fixes.sort("begins_with", body + "#")),),
        )


def _past_the_end(
    where: str, section: str, cond: Template, body: str, stuck: list[str], reach: _Reach
) -> Problem:
    """A prefix ending at '#' right after the whole sort key of a returned entity."""
    if reach.below:
        return Problem(
            where,
            f"{cond.source!r} goes past the end of {_names(stuck)}'s sort key, so it reads "
            f"only the {_names(reach.below)} items below: to read the item too, make the "
            "condition a collection of it",
            fix=(Edit(section, "sort", fixes.sort("collection", body)),),
        )
    return Problem(
        where,
        f"{cond.source!r} goes past the end of {_names(stuck)}'s sort key, so it matches "
        "no item: to read the item keyed there, use eq",
        fix=(Edit(section, "sort", fixes.sort("eq", body)),),
    )


def collection_heads(pattern: PatternSpec, resolved: Resolved) -> list[str] | None:
    """The returned entities keyed at a collection's head; None for another condition."""
    op, conditions = sort_templates(pattern.sort)
    keys = resolved.index_keys(pattern.index)
    if op != "collection" or keys is None or keys[1] is None:
        return None
    heads = []
    for name in pattern.returns:
        have = resolved.entities[name].keys.get(keys[1])
        if have is None:
            continue
        matched, why = structural(pattern, conditions[0], have, resolved.entities[name])
        if why is None and matched == len(have.segments):
            heads.append(name)
    return heads

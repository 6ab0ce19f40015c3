"""Queries that can read items of entities they do not return: what each condition can reach
(entities whose literals merely share characters, ORDER#... beside ORDERLINE#..., are judged
by it), with the fix that keeps what the query is for."""

from __future__ import annotations

from collections.abc import Iterator

from . import fixes, keymatch, keytemplate
from .diagnostics import Edit, Problem
from .keytemplate import Template
from .lower_queries import sort_templates
from .resolve import Entity, Resolved
from .sort_shape import collection_heads
from .spec import PatternSpec
from .structural import Lookup, lookup_in


def _slots(template: Template, lookup: Lookup) -> list[keymatch.Slot]:
    return keymatch.slots(template, lookup)


def _reads(
    pattern: PatternSpec, other: Entity, sk: str | None, conditions: list[Template], op: str
) -> bool:
    """Whether the query can read items of `other` (an entity it does not return)."""
    if sk is None or not op:
        return True
    find = lookup_in(pattern, other)
    theirs = _slots(other.keys[sk], other.var)
    mine = [_slots(c, find) for c in conditions]
    if op == "eq":
        return keymatch.can_equal(mine[0], theirs)
    if op == "collection":
        return keymatch.can_equal(mine[0], theirs) or keymatch.can_start(
            mine[0], theirs, strict=True
        )
    if op == "begins_with":
        last = mine[0][-1]
        if conditions[0].trailing_delimiter or last.literal is None:
            prefix = mine[0] if conditions[0].trailing_delimiter else mine[0][:-1]
            return keymatch.can_start(prefix, theirs, strict=True)
        return keymatch.can_begin(mine[0][:-1], last.literal, theirs)
    if op == "between":
        common = []
        for a, b in zip(mine[0], mine[1], strict=False):
            if a.literal is None or a != b:
                break
            common.append(a)
        return keymatch.can_start(common, theirs, strict=True)
    return True


def _others_read(
    pattern: PatternSpec, resolved: Resolved, op: str, conditions: list[Template]
) -> list[str]:
    """The entities the pattern does not return whose items its condition can read."""
    keys = resolved.index_keys(pattern.index)
    assert keys is not None
    pk, sk = keys
    first = resolved.entities[pattern.returns[0]]
    partition = _slots(keytemplate.parse(str(pattern.partition)), lookup_in(pattern, first))
    found = []
    for name, other in sorted(resolved.entities.items()):
        if name in pattern.returns or pk not in other.keys:
            continue
        if sk is not None and sk not in other.keys:
            continue
        if keymatch.can_equal(partition, _slots(other.keys[pk], other.var)) and _reads(
            pattern, other, sk, conditions, op
        ):
            found.append(name)
    return found


def _common_start(templates: list[Template]) -> list[str]:
    """The literal segments every template starts with."""
    common: list[str] = []
    for segments in zip(*(t.segments for t in templates), strict=False):
        if segments[0].literal is None or any(s != segments[0] for s in segments):
            break
        common.append(str(segments[0].literal))
    return common


def _narrowed(pattern: PatternSpec, resolved: Resolved) -> Template | None:
    """For a pattern without a sort condition: a begins_with over the literal segments its
    entities' sort keys start with, when that leaves every other entity out."""
    keys = resolved.index_keys(pattern.index)
    sk = keys[1] if keys else None
    if sk is None:
        return None
    templates = [e.keys[sk] for r in pattern.returns if sk in (e := resolved.entities[r]).keys]
    if not templates:
        return None
    common = _common_start(templates)
    if not common or any(len(t.segments) == len(common) for t in templates):
        return None
    cond = keytemplate.parse("#".join(common) + "#", condition=True)
    return None if _others_read(pattern, resolved, "begins_with", [cond]) else cond


def check_extra_reads(path: str, pattern: PatternSpec, resolved: Resolved) -> Iterator[Problem]:
    op, conditions = sort_templates(pattern.sort)
    also = _others_read(pattern, resolved, op, conditions)
    if not also or collection_heads(pattern, resolved) == []:  # a headless collection: one problem
        return
    listed = ", ".join(also)
    narrowed = _narrowed(pattern, resolved) if not op else None
    if narrowed is not None:
        yield Problem(
            f"{path}.returns",
            f"without a sort condition the query reads every item of its partition, "
            f"{listed} items too, which it does not return: read only what it returns with "
            f"begins_with {narrowed.source!r}",
            fix=(Edit(path, "sort", fixes.sort("begins_with", narrowed.source)),),
        )
        return
    if op in ("eq", "begins_with", "collection"):
        yield Problem(
            f"{path}.returns",
            f"the query can also read {listed} items (their keys on {pattern.index} match "
            "its condition), which it does not return: add them to returns to read them, or "
            "narrow the condition to leave them out",
            fix=(Edit(path, "returns", fixes.names([*pattern.returns, *also])),),
        )
        return
    yield Problem(
        f"{path}.returns",
        f"the {op} range runs on past the returned entities' keys into {listed} items "
        f"(their keys on {pattern.index} sort within it), which it does not return: "
        + _bound(op, pattern, resolved, listed),
    )


def _bound(op: str, pattern: PatternSpec, resolved: Resolved, listed: str) -> str:
    """How to keep a range among the returned entities' keys: both its ends within the
    literal start those keys share and the others' do not; else no bounds can, and the
    keys must set them apart."""
    prefix = _narrowed(pattern, resolved)
    if prefix is not None:
        ends = "start both of its bounds with"
        if op != "between":
            ends = "bound it with between, both ends starting with"
        return (
            f"{ends} {prefix.source!r}, which every key it returns starts with and no "
            f"{listed} key does, so that the range stays among them; or add them to returns "
            "to read them"
        )
    keys = resolved.index_keys(pattern.index)
    sk = keys[1] if keys else None
    entities = [e for r in pattern.returns if sk in (e := resolved.entities[r]).keys]
    common = _common_start([e.keys[str(sk)] for e in entities])
    if common:
        start = keytemplate.parse("#".join(common) + "#", condition=True)
        under = _others_read(pattern, resolved, "begins_with", [start])
        if under:
            return (
                f"{', '.join(under)} keys start with {start.source!r} as the returned "
                "entities' do, so no bounds leave them out: add them to returns to read them, "
                f"or give the returned entities' sort keys a literal segment after "
                f"{start.source!r} that those keys do not have, and start both ends of the "
                "range with it"
            )
    example = ""
    if len(entities) == 1 and not common:
        entity = entities[0]
        own = f"{entity.spec.type}#{entity.keys[str(sk)].source}"
        example = (
            f" ({entity.name}'s as {own!r}, both ends then starting with "
            f"{entity.spec.type + '#'!r})"
        )
    return (
        f"the returned entities' sort keys share no literal start that {listed} keys lack, "
        "so no bounds leave them out: give them one and start both ends of the range with it"
        + example
        + ", or add them to returns to read them"
    )

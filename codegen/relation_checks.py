"""Checks of relations: the pattern each names, the key arguments it gives from the
entity's attributes, and its field's name. A pattern with problems of its own is reported
by pattern_checks.py; its relations are not checked further."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from . import keytemplate
from .api_types import field_name
from .checks import SNAKE
from .diagnostics import Edit, Problem, toml_string
from .lower_queries import returned_classes
from .pattern_params import key_params, pattern_params
from .pytypes import KeyVar, snake
from .relations import misfit
from .resolve import TABLE_INDEX, Entity, Resolved
from .spec import RelationSpec


def check_relations(resolved: Resolved) -> Iterator[Problem]:
    for entity in resolved.entities.values():
        fields = {field_name(a): a for a in entity.attrs} | {"id": "id (its global id)"}
        for name, relation in entity.spec.relations.items():
            path = f"entities.{entity.name}.relations.{name}"
            if not SNAKE.match(name):
                yield Problem(path, f"relation names are snake_case: rename it {snake(name)}")
            elif field_name(name) in fields:
                yield Problem(
                    path,
                    f"its field {field_name(name)} is already {entity.name}'s field of "
                    f"attribute {fields[field_name(name)]}: rename the relation",
                )
            yield from _relation(path, entity, relation, resolved)


def _relation(
    path: str, entity: Entity, relation: RelationSpec, resolved: Resolved
) -> Iterator[Problem]:
    patterns = resolved.spec.patterns
    pattern = patterns.get(relation.pattern)
    if pattern is None:
        close = difflib.get_close_matches(relation.pattern, list(patterns), n=1)
        yield Problem(
            f"{path}.pattern",
            f"{relation.pattern!r} is not a pattern; "
            + (f"did you mean {close[0]!r}?" if close else "name one of [patterns]"),
            fix=(Edit(path, "pattern", toml_string(close[0])),) if close else (),
        )
        return
    params = _params(resolved, relation.pattern)
    if params is None:
        return  # the pattern's own problems are reported
    by_name = {p.name: p for p in params}
    listed = pattern.operation == "batch_get"
    for arg, attribute in relation.args.items():
        where = f"{path}.args.{arg}"
        var = by_name.get(arg)
        if var is None:
            yield Problem(
                where,
                f"{arg!r} is not a key argument of {relation.pattern} (its key arguments: "
                + (", ".join(by_name) or "none")
                + ")",
            )
            continue
        attr = entity.attrs.get(attribute)
        if attr is None:
            yield _unknown_attribute(path, where, entity, relation, arg)
            continue
        why = misfit(attr, var, listed)
        if why is not None:
            yield Problem(
                where,
                f"{entity.name}.{attribute} does not fit {relation.pattern}'s argument "
                f"{arg}: {why}",
            )
        elif listed and attr.spec.max_items is None:
            yield Problem(
                where,
                f"{entity.name}.{attribute} has no max_items: give it one, the most items "
                "the relation reads (an operation's cost counts them)",
            )
    unbound = [p.name for p in params if p.name not in relation.args]
    if listed and len(params) != 1:
        yield Problem(
            f"{path}.pattern",
            f"a batch_get relation reads an entity keyed by one value, from a list "
            f"attribute; {pattern.entity}'s key takes {', '.join(by_name)}: relate it "
            "with a get",
        )
    elif pattern.operation != "query" and unbound:
        yield Problem(
            f"{path}.args",
            f"a {pattern.operation} relation gives every key argument of "
            f"{relation.pattern} from {entity.name}'s attributes; give "
            + ", ".join(unbound)
            + " (a query's arguments not given are the field's)",
        )
    if relation.via is not None:
        via = list(_via(f"{path}.via", relation, resolved))
        yield from via
        if relation.first_page is not None and not via:
            yield from _first_page(f"{path}.first_page", entity, relation, resolved)
    elif relation.first_page is not None:
        yield Problem(f"{path}.first_page", "first_page holds what `via` follows: give `via`")
    if relation.nullable is False and (pattern.operation == "get" or _optional(entity, relation)):
        yield Problem(
            f"{path}.nullable",
            "a get, or a relation its parent may lack a value for, can answer nothing: "
            "it stays nullable; remove `nullable`",
        )
    if relation.ranged is not None:
        yield from _ranged(f"{path}.ranged", relation, resolved)
    if relation.list and pattern.operation != "query":
        yield Problem(f"{path}.list", "`list` shapes a query relation's field; remove it")


def _ranged(where: str, relation: RelationSpec, resolved: Resolved) -> Iterator[Problem]:
    """`ranged` names a query over the same items, taking the relation's pattern's
    arguments and bounds of a date or time."""
    patterns = resolved.spec.patterns
    pattern, ranged = patterns[relation.pattern], patterns.get(str(relation.ranged))
    if ranged is None or ranged.operation != "query" or pattern.operation != "query":
        yield Problem(where, "`ranged` names a query pattern, beside a query relation's")
        return
    if set(ranged.returns) != set(pattern.returns) or (_params(resolved, relation.pattern) is None):
        yield Problem(where, f"{relation.ranged} must read what {relation.pattern} reads")
        return
    own = {p.name for p in pattern_params(resolved, relation.pattern)}
    theirs = pattern_params(resolved, str(relation.ranged))
    bounds = [p for p in theirs if p.name not in own]
    if not own <= {p.name for p in theirs} or not bounds:
        yield Problem(
            where, f"{relation.ranged} takes {relation.pattern}'s arguments and its bounds"
        )
    elif any(p.type not in ("datetime", "date") for p in bounds):
        yield Problem(where, f"{relation.ranged}'s bounds must be dates or times, to be left out")


def _optional(entity: Entity, relation: RelationSpec) -> bool:
    """Whether a parent may lack an attribute the relation gives its pattern."""
    return any(
        (attr := entity.attrs.get(name)) is not None and attr.spec.optional
        for name in relation.args.values()
    )


def _first_page(
    where: str, entity: Entity, relation: RelationSpec, resolved: Resolved
) -> Iterator[Problem]:
    """`first_page` is a bounded list of ids or strings of the parent, and with what the
    parent gives the pattern, each of its values makes the key of an item the pattern
    reads, on the table's own keys."""
    pattern = resolved.spec.patterns[relation.pattern]
    attr = entity.attrs.get(str(relation.first_page))
    if attr is None or attr.spec.type != "list" or attr.spec.of not in ("id", "string"):
        yield Problem(
            where, f"{relation.first_page!r} is not a list of ids or strings of {entity.name}"
        )
        return
    if attr.spec.max_items is None:
        yield Problem(where, f"{entity.name}.{attr.name} has no max_items: give it one")
    if pattern.index != TABLE_INDEX:
        yield Problem(
            where, f"{relation.pattern} reads {pattern.index}: first_page makes table keys"
        )
        return
    (returned,) = pattern.returns
    follow = resolved.entities[returned].spec.relations[str(relation.via)]
    unbound = [
        p.name for p in pattern_params(resolved, relation.pattern) if p.name not in relation.args
    ]
    if unbound:
        yield Problem(
            where,
            f"first_page needs every argument of {relation.pattern} from {entity.name}; "
            f"give {', '.join(unbound)}",
        )
    given = set(relation.args) | set(follow.args.values())
    needed = [var.name for var in key_params(resolved, returned)]
    if len(follow.args) != 1 or not set(needed) <= given:
        shown = ", ".join(sorted(given & set(needed))) or "none"
        yield Problem(
            where,
            f"{returned}'s key takes {', '.join(needed)}; {entity.name} and its list give "
            f"{shown}: the first page makes each item's key from them",
        )
    taken = [
        f"{other.name}.{name}"
        for other in resolved.entities.values()
        for name, spec in other.spec.relations.items()
        if spec.pattern == relation.pattern and spec.first_page and spec is not relation
    ]
    if taken:
        yield Problem(where, f"{relation.pattern}'s first page is already {taken[0]}'s")


def _via(where: str, relation: RelationSpec, resolved: Resolved) -> Iterator[Problem]:
    """`via` follows a get relation of the one entity a query returns, whole."""
    pattern = resolved.spec.patterns[relation.pattern]
    if pattern.operation != "query" or len(pattern.returns) != 1:
        yield Problem(where, "`via` follows the items of a query returning one entity")
        return
    (returned,) = pattern.returns
    if returned_classes(pattern, resolved) != (returned,):
        yield Problem(
            where,
            f"{relation.pattern} reads {returned} from {pattern.index}, which holds only "
            "some of its attributes: `via` needs the whole item",
        )
        return
    relations = resolved.entities[returned].spec.relations
    follow = relations.get(str(relation.via))
    if follow is None:
        yield Problem(
            where,
            f"{relation.via!r} is not a relation of {returned} (its relations: "
            + (", ".join(relations) or "none")
            + ")",
        )
    elif (target := resolved.spec.patterns.get(follow.pattern)) is None or (
        target.operation != "get"
    ):
        yield Problem(where, f"{returned}.{relation.via} must be a get relation: one item each")


def _params(resolved: Resolved, name: str) -> list[KeyVar] | None:
    """The pattern's key arguments; None for a pattern too broken to have them."""
    pattern = resolved.spec.patterns[name]
    if pattern.operation == "query":
        known = pattern.partition is not None and pattern.returns
        if not known or not all(r in resolved.entities for r in pattern.returns):
            return None
    else:
        entity = resolved.entities.get(pattern.entity or "")
        table = resolved.spec.table
        if entity is None or not {table.partition_key, table.sort_key} <= set(entity.keys):
            return None
    try:
        return pattern_params(resolved, name)
    except keytemplate.TemplateError:
        return None


def _unknown_attribute(
    path: str, where: str, entity: Entity, relation: RelationSpec, arg: str
) -> Problem:
    attribute = relation.args[arg]
    close = difflib.get_close_matches(attribute, list(entity.attrs), n=1)
    fix: tuple[Edit, ...] = ()
    if close:
        args = {**relation.args, arg: close[0]}
        written = ", ".join(f"{k} = {toml_string(v)}" for k, v in args.items())
        fix = (Edit(path, "args", f"{{ {written} }}"),)
    return Problem(
        where,
        f"{attribute!r} is not an attribute of {entity.name}; "
        + (f"did you mean {close[0]!r}?" if close else "name one of: " + ", ".join(entity.attrs)),
        fix=fix,
    )

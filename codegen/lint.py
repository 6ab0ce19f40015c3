"""Key-design checks (DESIGN §3): every query served by a key or index, no keys that collide,
collections whose items sit below their head, summaries that can tell entities apart, shard
ranges matching their fan-out; with the checks of tenancy.py (tenants where the spec says),
sort_shape.py (prefixes ending at a delimiter), extra_reads.py (no query reading an entity it
does not return) and key_sizes.py (keys within DynamoDB's limits)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence

from . import fixes, keymatch, keytemplate
from .diagnostics import Edit, Problem, toml_string
from .extra_reads import check_extra_reads
from .key_sizes import check_key_sizes
from .keytemplate import Template
from .lower_queries import sort_templates
from .resolve import Entity, Resolved
from .sort_shape import check_sort_shape, collection_heads
from .spec import PatternSpec
from .structural import enum_values, lookup_in, same_kind, structural
from .summaries import summary_of
from .tenancy import check_missing_tenant, check_mixed_scopes, served_partition


def _served(path: str, pattern: PatternSpec, resolved: Resolved) -> Iterator[Problem]:
    """The pattern's partition and sort condition against each returned entity's keys; a
    mismatch of several entities is one problem (one template to change)."""
    keys = resolved.index_keys(pattern.index)
    assert keys is not None
    pk, sk = keys
    partition = keytemplate.parse(str(pattern.partition))
    op, conditions = sort_templates(pattern.sort)
    unserved: list[tuple[str, str, Entity]] = []
    unsorted: list[tuple[str, str, Template]] = []
    for name in pattern.returns:
        entity = resolved.entities[name]
        if pk not in entity.keys:
            inside = [i for i in resolved.all_indexes() if _in_index(entity, i, resolved)]
            yield Problem(
                f"{path}.returns",
                f"{name} has no keys.{pk}, so it is not in index {pattern.index}: give it "
                f"keys for {pattern.index}, or query an index it is in ("
                + (", ".join(inside) or "none")
                + ")",
            )
            continue
        have = entity.keys[pk]
        matched, why = structural(pattern, served_partition(pattern, have), have, entity)
        if why is None and matched != len(have.segments):
            why = f"is shorter than {name}'s {have.source!r}"
        if why:
            unserved.append((name, why, entity))
        if not op or sk is None or sk not in entity.keys:
            continue
        sort_key = entity.keys[sk]
        for condition in conditions:
            why = structural(pattern, condition, sort_key, entity)[1]
            if why:
                unsorted.append((name, why, condition))
                continue
            where = f"{path}.sort.{op}"
            yield from _sort_served(where, op, pattern, condition, (sk, sort_key), entity)
    if unserved:
        name, why, entity = unserved[0]
        misfit = _not_a_value(path, pattern, pk, entity)
        if misfit is not None:
            yield misfit
        else:
            yield _unserved(path, pattern, partition, unserved, pk, resolved)
    if unsorted:
        name, why, condition = unsorted[0]
        yield Problem(
            f"{path}.sort.{op}",
            f"no key serves this condition: {condition.source!r} {why}" + _nor(unsorted),
        )


def _unserved(
    path: str,
    pattern: PatternSpec,
    partition: Template,
    unserved: list[tuple[str, str, Entity]],
    pk: str,
    resolved: Resolved,
) -> Problem:
    name, why, entity = unserved[0]
    return Problem(
        f"{path}.partition",
        f"no key serves this pattern: the partition {partition.source!r} {why}"
        + _nor(unserved)
        + f"; make it match {name}'s keys.{pk} or use the index whose key it is",
        fix=_partition_fix(path, pattern, entity, resolved),
    )


def _not_a_value(path: str, pattern: PatternSpec, pk: str, entity: Entity) -> Problem | None:
    """A literal of the partition where the entity's key has an enum placeholder, though it
    is none of the enum's values; with the closest value as the fix."""
    have = entity.keys[pk]
    want = served_partition(pattern, have)
    at, _ = structural(pattern, want, have, entity)
    if at >= min(len(want.segments), len(have.segments)):
        return None
    literal, placeholder = want.segments[at].literal, have.segments[at].placeholder
    values = enum_values(entity, str(placeholder))
    if literal is None or not values:
        return None
    own = keytemplate.parse(str(pattern.partition))
    texts = [s.text for s in own.segments]
    close = difflib.get_close_matches(literal, values, n=1)
    fix: tuple[Edit, ...] = ()
    if close:
        texts[at - (len(want.segments) - len(own.segments))] = close[0]
        fix = (Edit(path, "partition", toml_string("#".join(texts))),)
    return Problem(
        f"{path}.partition",
        f"{literal!r} in the partition {own.source!r} is not a value of {{{placeholder}}}, "
        f"the enum {entity.name}'s keys.{pk} {have.source!r} has there: write one of its "
        f"values ({', '.join(values)}), or {{{placeholder}}} to take it as an argument",
        fix=fix,
    )


def _nor(misses: Sequence[tuple[str, str, object]]) -> str:
    """The other entities a template does not match either."""
    others = [n for n in dict.fromkeys(name for name, *_ in misses) if n != misses[0][0]]
    return f" (nor {', '.join(others)}'s key)" if others else ""


def _in_index(entity: Entity, index: str, resolved: Resolved) -> bool:
    keys = resolved.index_keys(index)
    return keys is not None and all(k is None or k in entity.keys for k in keys)


def _partition_fix(
    path: str, pattern: PatternSpec, entity: Entity, resolved: Resolved
) -> tuple[Edit, ...]:
    """The index whose key the partition is, else (for a pattern without args of its own,
    which the fix could leave unused) the entity's key as the partition."""
    for index in resolved.all_indexes():
        keys = resolved.index_keys(index)
        if index == pattern.index or keys is None or keys[0] not in entity.keys:
            continue
        have = entity.keys[keys[0]]
        matched, why = structural(pattern, served_partition(pattern, have), have, entity)
        if why is None and matched == len(have.segments):
            return (Edit(path, "index", toml_string(index)),)
    keys = resolved.index_keys(pattern.index)
    if pattern.args or keys is None:
        return ()
    return (Edit(path, "partition", toml_string(entity.keys[keys[0]].source)),)


def _sort_served(
    path: str,
    op: str,
    pattern: PatternSpec,
    cond: Template,
    key: tuple[str, Template],
    entity: Entity,
) -> Iterator[Problem]:
    """The shape of a condition that follows the entity's sort key `key` (attribute,
    template) against what it reaches: a collection's items below its head, no '#' after
    a whole key (eq and begins_with: sort_shape.py)."""
    attr, have = key
    matched = structural(pattern, cond, have, entity)[0]
    path_last = entity.var(str(have.segments[-1].placeholder))
    extends = path_last is not None and path_last.type == "path"
    if op == "collection" and (
        cond.trailing_delimiter
        or (matched < len(have.segments) and have.segments[matched].literal is None)
    ):
        if cond.trailing_delimiter:
            section = path.rsplit(".sort.", 1)[0]
            head = cond.source.removesuffix("#")
            fix = Edit(section, "sort", fixes.sort("collection", head))
        else:
            texts = [s.text for s in have.segments]
            texts.insert(matched, entity.spec.type)
            fix = Edit(f"entities.{entity.name}", f"keys.{attr}", toml_string("#".join(texts)))
        yield Problem(
            path,
            f"{entity.name}'s {have.source!r} must be the collection's head "
            f"{cond.source!r} itself, or continue below it with a literal segment "
            "(ORDER#{id}#ITEM#{n} below ORDER#{id})",
            fix=(fix,),
        )
    elif (
        op not in ("eq", "begins_with")  # codegen/sort_shape.py
        and cond.trailing_delimiter
        and matched == len(have.segments)
        and not extends
    ):
        yield Problem(path, f"{cond.source!r} goes past the end of {have.source!r}")


def _collection_head(path: str, pattern: PatternSpec, resolved: Resolved) -> Iterator[Problem]:
    """A collection query returns the entity keyed at its head, not only the ones below."""
    heads = collection_heads(pattern, resolved)
    _, conditions = sort_templates(pattern.sort)
    keys = resolved.index_keys(pattern.index)
    if heads is None or keys is None:
        return
    if heads:
        return
    head = conditions[0].source
    missing = [
        name
        for name, entity in sorted(resolved.entities.items())
        if name not in pattern.returns and _keyed_at(pattern, entity, keys, conditions[0])
    ]
    if missing:
        fix = Edit(path, "returns", fixes.names([*pattern.returns, *missing]))
        advice = f"return {', '.join(missing)} too, which is keyed there"
    else:
        fix = Edit(path, "sort", fixes.sort("begins_with", head + "#"))
        advice = "read the items below it with begins_with and a trailing '#'"
    yield Problem(
        f"{path}.sort.collection",
        f"no returned entity is keyed at {head!r}, the collection's head: {advice}",
        fix=(fix,),
    )


def _keyed_at(
    pattern: PatternSpec, entity: Entity, keys: tuple[str, str | None], head: Template
) -> bool:
    """Whether `entity`'s items sit at the pattern's partition and exactly at `head`."""
    pk, sk = keys
    if pk not in entity.keys or sk is None or sk not in entity.keys:
        return False
    templates = ((served_partition(pattern, entity.keys[pk]), pk), (head, sk))
    for template, attr in templates:
        matched, why = structural(pattern, template, entity.keys[attr], entity)
        if why is not None or matched != len(entity.keys[attr].segments):
            return False
    return True


def _collisions(resolved: Resolved) -> Iterator[Problem]:
    entities = sorted(resolved.entities.items())
    for index in resolved.all_indexes():
        keys = resolved.index_keys(index)
        assert keys is not None
        attrs = [k for k in keys if k is not None]
        present = [(n, e) for n, e in entities if all(a in e.keys for a in attrs)]
        for i, (name_a, a) in enumerate(present):
            for name_b, b in present[i + 1 :]:
                slots = [
                    (keymatch.slots(a.keys[k], a.var), keymatch.slots(b.keys[k], b.var))
                    for k in attrs
                ]
                if not keymatch.can_equal(*slots[0]):
                    continue
                where = f"entities.{name_b}.keys.{attrs[-1]}"
                if all(keymatch.can_equal(x, y) for x, y in slots[1:]):
                    yield Problem(
                        where,
                        f"{name_a} and {name_b} can have the same key on {index}, so one "
                        f"item would overwrite the other: give {name_b}'s key a literal "
                        f"segment of its own where {name_a}'s has a placeholder or another "
                        "literal",
                    )


def _projection(path: str, pattern: PatternSpec, resolved: Resolved) -> Iterator[Problem]:
    """A query on a partial index returns summaries; of several entities, it must tell them
    apart by their `_type`."""
    if len(pattern.returns) < 2:
        return
    for name in pattern.returns:
        summary = summary_of(resolved, resolved.entities[name], pattern.index)
        if summary is not None and not summary.typed:
            gsi = resolved.spec.table.indexes[pattern.index]
            section = f"table.indexes.{pattern.index}"
            edits = [Edit(section, "include", fixes.names([*gsi.include, "_type"]))]
            if gsi.projection != "INCLUDE":
                edits.insert(0, Edit(section, "projection", '"INCLUDE"'))
            yield Problem(
                f"{path}.index",
                f"{pattern.index} projects {summary.included or 'no attributes'} without "
                f"_type: a query returning {', '.join(pattern.returns)} cannot tell them "
                "apart; add _type to its include",
                fix=tuple(edits),
            )
            return


def _shards(path: str, pattern: PatternSpec, resolved: Resolved) -> Iterator[Problem]:
    if pattern.shards is None:
        return
    placeholder, count = pattern.shards.placeholder, pattern.shards.count
    for name in pattern.returns:
        entity = resolved.entities[name]
        attr = entity.attrs.get(placeholder)
        spec = attr.spec if attr else None
        if spec is None or spec.type != "int" or (spec.ge, spec.le) != (0, count - 1):
            if spec is not None and spec.type == "int":
                fix = fixes.attribute(entity, placeholder, ge=0, le=count - 1)
            else:
                value = (
                    f'{{ type = "int", ge = 0, le = {count - 1}, width = {len(str(count - 1))} }}'
                )
                fix = Edit(f"entities.{name}", f"attributes.{placeholder}", value)
            yield Problem(
                f"{path}.shards",
                f"{name} needs an int attribute {placeholder} with ge = 0 and le = "
                f"{count - 1}, so that writers use exactly the {count} shards read here",
                fix=(fix,),
            )


def _shared_types(path: str, pattern: PatternSpec, resolved: Resolved) -> Iterator[Problem]:
    """A placeholder the pattern fills must have one type across the returned entities."""
    _, conditions = sort_templates(pattern.sort)
    templates = [keytemplate.parse(str(pattern.partition)), *conditions]
    names = dict.fromkeys(p for t in templates for p in t.placeholders)
    for placeholder in names:
        found = [
            (name, var)
            for name in pattern.returns
            if (var := lookup_in(pattern, resolved.entities[name])(placeholder)) is not None
        ]
        if any(not same_kind(found[0][1], var) for _, var in found[1:]):
            yield Problem(
                f"{path}.returns",
                f"{{{placeholder}}} has different types in "
                + ", ".join(f"{n} ({v.type})" for n, v in found)
                + ": one argument fills it for all of them, so give the attributes one type "
                "(or return the entities from separate patterns)",
            )


def lint(resolved: Resolved) -> list[Problem]:
    """Every key-design problem of a spec that passed the structural checks."""
    problems = [
        *check_missing_tenant(resolved),
        *check_mixed_scopes(resolved),
        *_collisions(resolved),
        *check_key_sizes(resolved),
    ]
    for name, pattern in resolved.spec.patterns.items():
        if pattern.operation != "query":
            continue
        path = f"patterns.{name}"
        checks = (
            _served,
            check_sort_shape,
            _collection_head,
            check_extra_reads,
            _projection,
            _shards,
            _shared_types,
        )
        for check in checks:
            problems.extend(check(path, pattern, resolved))
    return problems

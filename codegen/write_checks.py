"""Checks of an entity's writes: the claims, copies and counts its writes keep, against the
entities they name, their attributes and keys, and DynamoDB's 100 actions a transaction."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from . import keytemplate, rules
from .authz import collect
from .diagnostics import Edit, Problem, toml_string
from .pattern_params import key_params, query_params
from .resolve import Attr, Entity, Resolved
from .spec import CountSpec, DerivedSpec, OwnsSpec, ParentSpec
from .writes import VERSION, actions_at_most, derived_fields, removal_of

MAX_ACTIONS = 100
"""The most actions one DynamoDB transaction takes."""


def check_writes(resolved: Resolved) -> Iterator[Problem]:
    for entity in resolved.entities.values():
        spec = entity.spec
        path = f"entities.{entity.name}"
        kept = {**spec.unique, **spec.copies} or spec.counts
        if (kept or spec.requires) and not spec.writes:
            yield Problem(
                f"{path}.writes",
                "its claims, copies, counts and parents are kept by its writes: list them, "
                'e.g. writes = ["create", "update", "delete"]',
                fix=(Edit(path, "writes", '["create", "update", "delete"]'),),
            )
        if spec.mutations is False and not spec.writes:
            yield Problem(f"{path}.mutations", "it has no writes to keep out of the API; remove it")
        version = entity.attrs.get(VERSION)
        if version is not None and version.spec.type != "int":
            yield Problem(f"{path}.attributes.{VERSION}", "a version is an int")
        elif version is None and "update" in spec.writes and kept:
            yield Problem(
                f"{path}.writes",
                f"an update moves its claims and copies: give {entity.name} a version "
                '(attributes.version = { type = "int", ge = 1 }) so that two updates '
                "cannot race",
            )
        for kind, specs in (("unique", spec.unique), ("copies", spec.copies)):
            for name, derived in specs.items():
                yield from _derived(resolved, entity, f"{path}.{kind}.{name}", kind, derived)
        for name, count in spec.counts.items():
            yield from _count(resolved, entity, f"{path}.counts.{name}", count)
        for name, parent in spec.requires.items():
            yield from _parent(resolved, entity, f"{path}.requires.{name}", parent)
        for name, owns in spec.owns.items():
            yield from _owns(resolved, entity, f"{path}.owns.{name}", owns)
        if spec.expires_after is not None:
            yield from _expiry(resolved, entity, f"{path}.expires_after")
        if actions_at_most(entity) > MAX_ACTIONS:
            yield Problem(
                f"{path}.writes",
                f"a write of {entity.name} can send {actions_at_most(entity)} "
                f"actions, and a transaction takes at most {MAX_ACTIONS}: keep fewer claims, "
                "copies and counts",
            )


def _entity(resolved: Resolved, where: str, name: str) -> Iterator[Problem]:
    if name in resolved.entities:
        return
    close = difflib.get_close_matches(name, list(resolved.entities), n=1)
    yield Problem(
        f"{where}.entity",
        f"{name!r} is not an entity; "
        + (f"did you mean {close[0]!r}?" if close else "name one of [entities]"),
        fix=(Edit(where, "entity", toml_string(close[0])),) if close else (),
    )


def _derived(
    resolved: Resolved, source: Entity, where: str, kind: str, spec: DerivedSpec
) -> Iterator[Problem]:
    unknown = list(_entity(resolved, where, spec.entity))
    if unknown:
        yield from unknown
        return
    target = resolved.entities[spec.entity]
    if target.tenant_scoped != source.tenant_scoped:
        yield Problem(where, f"{target.name} and {source.name} differ in tenancy")
    for mine, theirs in spec.args.items():
        if mine not in target.attrs:
            yield Problem(f"{where}.args.{mine}", f"{mine!r} is not an attribute of {target.name}")
        elif theirs not in source.attrs:
            yield Problem(
                f"{where}.args.{mine}", f"{theirs!r} is not an attribute of {source.name}"
            )
    fields = derived_fields(resolved, source, spec)
    for name, attr in target.attrs.items():
        given = fields.get(name)
        if given is None:
            if not attr.spec.optional:
                yield Problem(
                    f"{where}.args",
                    f"{target.name}.{name} is required and {source.name} has no attribute of "
                    f'that name: give it in args ({name} = "<attribute of {source.name}>")',
                )
        elif given in source.attrs and (why := _misfit(attr, source.attrs[given])) is not None:
            yield Problem(
                f"{where}.args", f"{source.name}.{given} cannot fill {target.name}.{name}: {why}"
            )
    placed = _key_attributes(resolved, target)
    if spec.fold is not None and kind != "unique":
        yield Problem(f"{where}.fold", "only a claim's value is folded: take fold out")
    if kind == "unique":
        value = where.rsplit(".", 1)[1]
        if value not in source.attrs:
            yield Problem(where, f"{value!r} is not an attribute of {source.name}")
            return
        if spec.fold is not None and source.attrs[value].spec.type != "string":
            yield Problem(f"{where}.fold", f"only a string is folded; {value} is not one")
        for attribute in placed:
            if fields.get(attribute) != value:
                yield Problem(
                    f"{where}.entity",
                    f"a claim is keyed by the value alone, but {target.name}'s key names "
                    f"{attribute} (from {source.name}.{fields.get(attribute)}), not "
                    f"{source.name}.{value}",
                )
    elif target.name == source.name and all(fields.get(a) == a for a in placed):
        yield Problem(
            f"{where}.args",
            f"a copy of {source.name} under its own key is the item itself: give args "
            "that key it elsewhere (a friendship's other direction swaps its ids)",
        )


def _key_attributes(resolved: Resolved, entity: Entity) -> list[str]:
    """The attributes its primary key is built from; none while its keys have problems of
    their own (reported by the key checks)."""
    try:
        return [p.name for p in key_params(resolved, entity.name)]
    except (KeyError, keytemplate.TemplateError):
        return []


def _misfit(target: Attr, source: Attr) -> str | None:
    a, b = target.spec, source.spec
    if (a.type, a.of) != (b.type, b.of):
        return f"it is {b.type}{f' of {b.of}' if b.of else ''}, not {a.type}"
    if a.type == "enum" and set(b.values or ()) - set(a.values or ()):
        return "it has values the other does not"
    return None


def _count(resolved: Resolved, source: Entity, where: str, spec: CountSpec) -> Iterator[Problem]:
    yield from _parent(resolved, source, where, ParentSpec(entity=spec.entity, args=spec.args))
    parent = resolved.entities.get(spec.entity)
    if parent is None:
        return
    counted = parent.attrs.get(spec.attribute)
    if counted is None or counted.spec.type != "int" or counted.spec.optional:
        yield Problem(
            f"{where}.attribute",
            f"a count is a required int attribute of {parent.name}; {spec.attribute!r} is not",
        )
    elif counted.spec.le is not None and spec.max > counted.spec.le:
        yield Problem(
            f"{where}.max", f"{parent.name}.{spec.attribute} is at most {counted.spec.le}"
        )


def _parent(resolved: Resolved, source: Entity, where: str, spec: ParentSpec) -> Iterator[Problem]:
    """A parent item named by its entity, its key given from the source's attributes."""
    unknown = list(_entity(resolved, where, spec.entity))
    if unknown:
        yield from unknown
        return
    parent = resolved.entities[spec.entity]
    parts = _key_attributes(resolved, parent)
    of, each = f"a part of {parent.name}'s key", f"{parent.name}'s key part"
    yield from _given(where, spec.args, parts, source, of, each)


def _given(
    where: str, args: dict[str, str], names: list[str], source: Entity, of: str, each: str
) -> Iterator[Problem]:
    """`args` giving `names` (what `of` takes) from `source`'s attributes: each a name,
    each from an attribute, and each name given or one of the source's own."""
    for arg, attribute in args.items():
        if arg not in names:
            yield Problem(
                f"{where}.args.{arg}", f"{arg!r} is not {of} ({', '.join(names) or 'none'})"
            )
        elif attribute not in source.attrs:
            yield Problem(
                f"{where}.args.{arg}", f"{attribute!r} is not an attribute of {source.name}"
            )
    for name in names:
        if name not in args and name not in source.attrs:
            yield Problem(
                f"{where}.args",
                f'give {each} {name} from an attribute of {source.name} ({name} = "<attribute>")',
            )


def _owns(resolved: Resolved, owner: Entity, where: str, spec: OwnsSpec) -> Iterator[Problem]:
    """Owned items: a query of one partition the owner's attributes name, each of whose
    items can be removed with what it keeps."""
    if "delete" not in owner.spec.writes:
        yield Problem(where, "what it owns goes after its delete: list delete in writes")
    if resolved.spec.table.sort_key is None:
        yield Problem(where, "the tasks that remove owned items need a table with a sort key")
    pattern = resolved.spec.patterns.get(spec.pattern)
    if pattern is None:
        close = difflib.get_close_matches(spec.pattern, list(resolved.spec.patterns), n=1)
        yield Problem(
            f"{where}.pattern",
            f"{spec.pattern!r} is not a pattern"
            + (f"; did you mean {close[0]!r}?" if close else ""),
            fix=(Edit(where, "pattern", toml_string(close[0])),) if close else (),
        )
        return
    if pattern.operation != "query" or pattern.shards:
        yield Problem(f"{where}.pattern", f"{spec.pattern} is not a query of one partition")
        return
    scoped = "{tenant}" in str(pattern.partition)
    if scoped != owner.tenant_scoped:
        yield Problem(f"{where}.pattern", f"{spec.pattern} and {owner.name} differ in tenancy")
    try:
        params = [p.name for p in query_params(resolved, spec.pattern)]
        removals = [removal_of(resolved, found) for found in pattern.returns]
    except (KeyError, keytemplate.TemplateError):
        return  # its pattern's or entities' own problems are reported by their checks
    of, each = f"an argument of {spec.pattern}", f"{spec.pattern}'s argument"
    yield from _given(where, spec.args, params, owner, of, each)
    for found, removal in zip(pattern.returns, removals, strict=True):
        kept = resolved.entities[found].spec
        if removal.by is None and (kept.unique or kept.copies or kept.counts):
            yield Problem(
                f"{where}.pattern",
                f"{found} keeps claims, copies or counts, so it is removed by its delete: "
                f"list delete in {found}'s writes",
            )
        elif any(not attribute for _, attribute in removal.parts):
            yield Problem(
                f"{where}.pattern",
                f"{found} is a copy of {removal.by} that does not carry {removal.by}'s key",
            )


def _expiry(resolved: Resolved, entity: Entity, where: str) -> Iterator[Problem]:
    """An expiry is set by the create, in the table's TTL attribute, an int of the entity."""
    ttl = resolved.spec.table.ttl_attribute
    if "create" not in entity.spec.writes:
        yield Problem(where, "an expiry is set by the create: list it in writes")
    if ttl is None:
        yield Problem(
            where,
            'the table has no TTL attribute: give [table] one (ttl_attribute = "expires_at")',
        )
    elif ttl not in entity.attrs:
        yield Problem(
            where,
            f"the expiry is kept in the table's TTL attribute: give {entity.name} "
            f'attributes.{ttl} = {{ type = "int", ge = 0, optional = true }}',
        )


def check_write_rules(resolved: Resolved) -> Iterator[Problem]:
    """A write the entity lists whose rule lets no caller make it (`nobody`): its mutation
    would refuse everyone."""
    checked, _ = collect(resolved)
    if checked is None:
        return
    for entity in resolved.entities.values():
        for operation in entity.spec.writes:
            if checked.entities.get((entity.name, operation)) == rules.Const(False):
                yield Problem(
                    f"entities.{entity.name}.writes",
                    f"{operation} is listed, but access.{operation} lets nobody make it: take "
                    f"it out of writes, or give access.{operation} a rule",
                )

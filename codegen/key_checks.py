"""Checks of entity key templates: known key attributes, known placeholders, key-able types."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from . import fixes
from .checks import RESERVED
from .diagnostics import Edit, Problem, toml_string
from .keytemplate import Template
from .resolve import Entity, Resolved

KEY_TYPES = frozenset({"id", "string", "int", "datetime", "date", "enum", "path"})


def _fits(ge: float | None, le: float | None, width: int | None) -> bool:
    return ge is not None and ge >= 0 and le is not None and width is not None and le < 10**width


def _unknown_placeholder(path: str, template: Template, name: str, entity: Entity) -> Problem:
    known = ", ".join(sorted(entity.attrs)) or "none"
    close = difflib.get_close_matches(name, list(entity.attrs), n=1)
    fix: tuple[Edit, ...] = ()
    hint = "fix the name or declare it"
    if close:
        hint = f"did you mean {{{close[0]}}}?"
        segments = [close[0] if s.placeholder == name else None for s in template.segments]
        text = "#".join(
            "{" + fixed + "}" if fixed else s.text
            for fixed, s in zip(segments, template.segments, strict=True)
        )
        text += "#" if template.trailing_delimiter else ""
        if ".keys." in path:
            section, _, key = path.partition(".keys.")
            fix = (Edit(section, f"keys.{key}", toml_string(text)),)
        elif path.endswith(".partition"):
            fix = (Edit(path.removesuffix(".partition"), "partition", toml_string(text)),)
        elif ".sort." in path:
            section, _, op = path.partition(".sort.")
            fix = (Edit(section, "sort", fixes.sort(op, text)),)
    return Problem(
        path,
        f"{template.source!r} names {{{name}}}, which is not an attribute of {entity.name} "
        f"(its attributes: {known}); {hint}",
        fix=fix,
    )


def _int_fix(entity: Entity, name: str) -> Edit:
    """The int attribute with a range of whole non-negative numbers (its own where it has
    one) and the width its largest value needs."""
    spec = entity.attrs[name].spec
    digits = len(str(int(spec.le))) if spec.le is not None and spec.le >= 0 else None
    width = max(spec.width or 0, digits or 0) or 10
    ge = 0 if spec.ge is None or spec.ge < 0 else int(spec.ge)
    le = 10**width - 1 if spec.le is None or spec.le < 0 else int(spec.le)
    return fixes.attribute(entity, name, ge=ge, le=le, width=width)


def _key_type(path: str, name: str, entity: Entity) -> Iterator[Problem]:
    """Whether the attribute's type can be part of a key that sorts as its values do."""
    spec = entity.attrs[name].spec
    if spec.type not in KEY_TYPES:
        yield Problem(
            path,
            f"{{{name}}} is a {spec.type}, which cannot be part of a key; key "
            "placeholders are id, string, int (with width), datetime, date, enum or path "
            "(store a float as an int of its smallest unit, cents for money)",
        )
    elif spec.type == "int" and spec.width is None:
        yield Problem(
            path,
            f"int {{{name}}} has no `width`: it would not sort as a string (10 < 9); "
            f"give attribute {name} the digits of its largest value",
            fix=(_int_fix(entity, name),),
        )
    elif spec.type == "int" and not _fits(spec.ge, spec.le, spec.width):
        yield Problem(
            path,
            f"int {{{name}}} must have ge >= 0 and le < 10**width so its zero-padded "
            f"text sorts like the number; give attribute {name} a range of whole numbers "
            "from 0 and the width its largest value needs",
            fix=(_int_fix(entity, name),),
        )


def check_placeholders(
    path: str,
    template: Template,
    entity: Entity,
    extra: frozenset[str] = frozenset(),
    primary: bool = False,
    judged: set[str] | None = None,
) -> Iterator[Problem]:
    """Every placeholder names tenant, one of `extra` or a key-able attribute of `entity`
    (whether a global entity's keys may name the tenant is checked in codegen/tenancy.py).
    The attributes' types are judged once per entity: for those not yet in `judged`, which
    gains them (None, as for a pattern's templates: judged where the entity's keys are)."""
    paths = 0
    for name in template.placeholders:
        if name in RESERVED:
            yield Problem(
                path,
                f"{{{name}}} is a name generated functions use themselves; rename the "
                "attribute or arg (reserved: " + ", ".join(sorted(RESERVED)) + ")",
            )
        if name == "tenant" or name in extra:  # a global entity's: codegen/tenancy.py
            continue
        attr = entity.attrs.get(name)
        if attr is None:
            yield _unknown_placeholder(path, template, name, entity)
            continue
        if attr.spec.type == "path":
            paths += 1
        if judged is not None and name not in judged:
            judged.add(name)
            yield from _key_type(path, name, entity)
        if primary and attr.spec.optional:
            yield Problem(
                path,
                f"{{{name}}} is optional, but the table's key must always exist; make it "
                "required or move it to an index key (a sparse index)",
            )
    if paths > 1:
        yield Problem(path, "a template may hold at most one path placeholder")


def check_keys(resolved: Resolved) -> Iterator[Problem]:
    table = resolved.spec.table
    for name, entity in resolved.entities.items():
        base = f"entities.{name}.keys"
        known: set[str] = set()
        for index in resolved.all_indexes():
            keys = resolved.index_keys(index)
            assert keys is not None
            present = [k for k in keys if k is not None and k in entity.spec.keys]
            wanted = [k for k in keys if k is not None]
            known.update(wanted)
            if index == "table" and len(present) != len(wanted):
                yield Problem(
                    base,
                    f"every entity needs keys.{table.partition_key} and keys.{table.sort_key}",
                )
            elif present and len(present) != len(wanted):
                yield Problem(
                    base,
                    f"index {index} needs both {' and '.join(wanted)} (or neither: the item "
                    "is then not in the index)",
                )
        for attr in entity.spec.keys:
            if attr not in known:
                yield Problem(
                    f"{base}.{attr}",
                    f"{attr} is not a key attribute of the table or an index; use one of "
                    + ", ".join(sorted(known)),
                )
        judged: set[str] = set()
        for attr, template in entity.keys.items():
            primary = attr in (table.partition_key, table.sort_key)
            yield from check_placeholders(
                f"{base}.{attr}", template, entity, primary=primary, judged=judged
            )

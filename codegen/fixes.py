"""Spec edits that fix a problem, written as the spec writes them: an attribute's inline
table with a setting changed, a list of names, a sort condition."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .diagnostics import Edit, toml_string
from .resolve import Entity
from .spec import AttributeSpec


def toml_value(value: Any) -> str:
    """A Python value of the spec (str, bool, number, tuple of them) as TOML text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return str(value)


def rule(text: str) -> str:
    """A rule as TOML: a literal string, so its quoted values need no escapes."""
    return f"'{text}'" if "'" not in text and "\n" not in text else toml_string(text)


def at(path: str) -> tuple[str, str]:
    """(table, dotted key) of a TOML path as a fix writes it: under the entity, pattern,
    struct or index it belongs to (`entities.User`, `access.read`)."""
    parts = path.split(".")
    size = 3 if parts[:2] == ["table", "indexes"] else 2
    return ".".join(parts[:size]), ".".join(parts[size:])


def names(values: Sequence[str]) -> str:
    return toml_value(tuple(values))


def sort(op: str, value: str) -> str:
    """A sort condition as its inline table."""
    return f"{{ {op} = {toml_string(value)} }}"


def inline(spec: AttributeSpec, **changes: Any) -> str:
    """The attribute's inline table as written, with `changes` made (None removes one)."""
    settings = {field: getattr(spec, field) for field in type(spec).model_fields}
    written = [f for f in type(spec).model_fields if f in spec.model_fields_set]
    for field, value in changes.items():
        settings[field] = value
        if field not in written:
            written.append(field)
    body = ", ".join(
        f"{field} = {toml_value(settings[field])}"
        for field in written
        if settings[field] is not None
    )
    return f"{{ {body} }}"


def attribute_at(path: str, spec: AttributeSpec, **changes: Any) -> Edit:
    """The edit of the attribute at TOML path `path` (entities.E.attributes.a, structs.S.f)."""
    section, _, key = path.partition(".attributes.")
    if not key:
        section, _, key = path.rpartition(".")
    else:
        key = f"attributes.{key}"
    return Edit(section, key, inline(spec, **changes))


def attribute(entity: Entity, name: str, **changes: Any) -> Edit:
    """The attribute's line with `changes` made (None removes a setting), under the entity
    that declares it (the entity it takes attributes_from, if not its own)."""
    owner = entity.name if name in entity.spec.attributes else entity.spec.attributes_from
    spec: AttributeSpec = entity.attrs[name].spec
    return attribute_at(f"entities.{owner}.attributes.{name}", spec, **changes)

"""Worst-case key sizes: every key template of an entity (the table's keys and each index's)
must fit DynamoDB's limits, 2,048 bytes of UTF-8 for a partition key and 1,024 for a sort key,
with the longest values its attributes allow, escaped as keygraph.keycodec escapes them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .diagnostics import Problem
from .keytemplate import Template
from .pytypes import ID_MAX_LENGTH
from .resolve import Attr, Entity, Resolved

PARTITION_KEY_BYTES = 2048
SORT_KEY_BYTES = 1024
DATETIME_BYTES = len("2024-01-02T03:04:05.000006Z")
DATE_BYTES = len("2024-01-02")
ANY_CHARACTER_BYTES = 4
"""The most bytes a character can take: four in UTF-8 (an escaped # or % takes three)."""

_CLASS_PATTERN = re.compile(r"^\^\[([^\]\\^][^\]\\]*)\](?:[+*]|\{(\d+)(?:,(\d*))?\})\$$")
"""A pattern of one character class repeated: ^[A-Za-z0-9_]+$, ^[A-Z]{3}$, ^[a-z]{1,8}$."""
_ONE_BYTE = (
    "give it a pattern of one ASCII character class without # and % (each character then "
    "takes one byte, as with ^[0-9A-Za-z]+$)"
)
_FEWER_IDS = (
    f"take placeholders out of the template (an id, as the tenant, takes up to {ID_MAX_LENGTH} "
    f"characters of up to {ANY_CHARACTER_BYTES} bytes)"
)


@dataclass(frozen=True, slots=True)
class Size:
    """The most bytes a placeholder's value takes in a key, or None when nothing bounds it,
    with what to change (`fix`) to lower or bound it."""

    bytes: int | None
    fix: str


def character_bytes(pattern: str | None) -> tuple[int, int | None]:
    """(the most bytes one escaped character matching `pattern` takes, the most characters
    its quantifier allows). Only a single character class is understood; any other pattern
    allows any character."""
    match = _CLASS_PATTERN.match(pattern or "")
    if match is None:
        return ANY_CHARACTER_BYTES, None
    body, exact, upper = match.groups()
    chars = set(re.sub(r"(.)-(.)", lambda m: _span(m.group(1), m.group(2)), body))
    most = int(exact) if exact is not None and upper is None else None
    if upper:
        most = int(upper)
    if any(not c.isascii() for c in chars):
        return ANY_CHARACTER_BYTES, most
    return (3 if chars & {"#", "%"} else 1), most


def _span(low: str, high: str) -> str:
    return "".join(chr(c) for c in range(ord(low), ord(high) + 1))


def _declared_in(entity: Entity, name: str) -> str:
    owner = entity.name if name in entity.spec.attributes else entity.spec.attributes_from
    return f"entities.{owner}.attributes.{name}"


def placeholder_size(name: str, attr: Attr | None, where: str) -> Size:
    """The worst case of one placeholder; `where` is the TOML path of its attribute."""
    if attr is None:  # the tenant, an id from the token
        return Size(ID_MAX_LENGTH * ANY_CHARACTER_BYTES, _FEWER_IDS)
    spec = attr.spec
    if spec.type == "id":
        each, quantified = character_bytes(spec.pattern)
        most = min(n for n in (ID_MAX_LENGTH, spec.max_length, quantified) if n is not None)
        return Size(most * each, f"lower max_length of {where}, or {_ONE_BYTE}")
    if spec.type == "enum":
        values = spec.values or ("",)
        return Size(max(len(v.encode()) for v in values), f"shorten the values of {where}")
    if spec.type == "int":
        return Size(spec.width or 0, f"lower the width of {where}")
    if spec.type in ("datetime", "date"):
        return Size(DATETIME_BYTES if spec.type == "datetime" else DATE_BYTES, _FEWER_IDS)
    each, quantified = character_bytes(spec.pattern)
    bounds = [n for n in (spec.max_length, quantified) if n is not None]
    length = min(bounds) if bounds else None
    if spec.type == "path":
        if length is None or spec.max_items is None:
            return Size(
                None,
                f"{{{name}}} is a path without max_items (its most parts) or max_length (the "
                f"most characters of a part); add both to {where}",
            )
        fix = f"lower max_items or max_length of {where}, or {_ONE_BYTE}"
        return Size(spec.max_items * (length * each + 1) - 1, fix)
    if length is None:
        return Size(
            None,
            f"{{{name}}} is a {spec.type} without max_length; add max_length to {where}",
        )
    return Size(length * each, f"lower max_length of {where}, or {_ONE_BYTE}")


def check_key_sizes(resolved: Resolved) -> Iterator[Problem]:
    partitions = {keys[0] for i in resolved.all_indexes() if (keys := resolved.index_keys(i))}
    for name, entity in resolved.entities.items():
        for attribute, template in entity.keys.items():
            limit = PARTITION_KEY_BYTES if attribute in partitions else SORT_KEY_BYTES
            path = f"entities.{name}.keys.{attribute}"
            yield from _check(path, template, entity, resolved, limit)


def _check(
    path: str, template: Template, entity: Entity, resolved: Resolved, limit: int
) -> Iterator[Problem]:
    kind = "partition" if limit == PARTITION_KEY_BYTES else "sort"
    total = len(template.segments) - 1
    sizes: list[tuple[str, Size]] = []
    for segment in template.segments:
        if segment.literal is not None:
            total += len(segment.literal)
            continue
        placeholder = str(segment.placeholder)
        attr = entity.attrs.get(placeholder)
        where = _declared_in(entity, placeholder) if attr else ""
        size = placeholder_size(placeholder, attr, where)
        if size.bytes is None:
            yield Problem(
                path,
                f"{template.source!r} has no size limit, and DynamoDB refuses a {kind} key "
                f"over {limit:,} bytes: {size.fix}",
            )
            return
        total += size.bytes
        sizes.append((placeholder, size))
    if total <= limit:
        return
    largest = max(sizes, key=lambda pair: pair[1].bytes or 0)
    shares = ", ".join(f"{{{n}}} {s.bytes:,}" for n, s in sizes)
    yield Problem(
        path,
        f"{template.source!r} can take {total:,} bytes with the longest values its attributes "
        f"allow ({shares}), more than the {limit:,} DynamoDB allows a {kind} key; "
        + largest[1].fix,
    )

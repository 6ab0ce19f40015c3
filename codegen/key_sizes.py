"""Worst-case key sizes: every key template of an entity (the table's keys and each index's)
must fit DynamoDB's limits, 2,048 bytes of UTF-8 for a partition key and 1,024 for a sort key,
with the longest values its attributes allow, escaped as keygraph.keycodec escapes them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from . import fixes
from .diagnostics import Edit, Problem
from .keytemplate import Template
from .pytypes import ID_MAX_LENGTH
from .resolve import Entity, Resolved

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
_ONE_BYTE_ALL = _ONE_BYTE.replace("give it", "give them all", 1)
_FEWER_IDS = (
    f"take placeholders out of the template (an id, as the tenant, takes up to {ID_MAX_LENGTH} "
    f"characters of up to {ANY_CHARACTER_BYTES} bytes)"
)


@dataclass(frozen=True, slots=True)
class Size:
    """The most bytes a placeholder's value takes in a key, or None when nothing bounds it,
    with what to change (`fix`) to lower or bound it and, given the bytes it may take, the
    attribute's line changed to fit them (`fit`), when a length bounds it."""

    bytes: int | None
    fix: str
    fit: Callable[[int], tuple[Edit, ...]] | None = None


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


def same_id(resolved: Resolved, name: str) -> list[Entity]:
    """The entities declaring an id attribute `name` (each declaration once: an entity taking
    its attributes_from another shares that one's): one id, which every entity holding it
    must allow the same values of."""
    found: dict[str, Entity] = {}
    for entity in resolved.entities.values():
        attr = entity.attrs.get(name)
        if attr is not None and attr.spec.type == "id":
            found.setdefault(_declared_in(entity, name), entity)
    return list(found.values())


def _characters(entity: Entity, name: str) -> int | None:
    """The most characters of `entity`'s id or string `name`; None when nothing bounds it."""
    spec = entity.attrs[name].spec
    most = ID_MAX_LENGTH if spec.type == "id" else None
    bounds = [n for n in (most, spec.max_length, character_bytes(spec.pattern)[1]) if n is not None]
    return min(bounds) if bounds else None


def _fit_length(entities: list[Entity], name: str, each: int) -> Callable[[int], tuple[Edit, ...]]:
    """max_length so that the value takes at most the given bytes, in each of `entities`
    that allows a longer one (an id narrowed everywhere it is the same id)."""

    def fit(budget: int) -> tuple[Edit, ...]:
        length = budget // each
        if length < 1:
            return ()
        return tuple(
            fixes.attribute(entity, name, max_length=length)
            for entity in entities
            if (most := _characters(entity, name)) is None or most > length
        )

    return fit


def _fit_path(
    entity: Entity, name: str, each: int, items: int
) -> Callable[[int], tuple[Edit, ...]]:
    """max_items (as set, else 8) and a part's max_length so that the path fits."""

    def fit(budget: int) -> tuple[Edit, ...]:
        length = ((budget + 1) // items - 1) // each
        if length < 1:
            return ()
        return (fixes.attribute(entity, name, max_items=items, max_length=length),)

    return fit


def _id_size(name: str, entity: Entity, resolved: Resolved) -> Size:
    """An id's worst case; the fix narrows it everywhere it is the same id, not in one
    entity alone (whose key would then refuse ids the others take)."""
    each = character_bytes(entity.attrs[name].spec.pattern)[0]
    most = _characters(entity, name) or ID_MAX_LENGTH
    where = _declared_in(entity, name)
    copies = same_id(resolved, name)
    if len(copies) < 2:
        fix = f"lower max_length of {where}, or {_ONE_BYTE}"
        return Size(most * each, fix, _fit_length([entity], name, each))
    listed = ", ".join(_declared_in(e, name) for e in copies)
    fix = (
        f"lower max_length of {{{name}}} everywhere it is the same id ({listed}): narrowed "
        f"in {entity.name} alone, it would let the others take ids that no {entity.name} "
        f"can hold; or {_ONE_BYTE_ALL}"
    )
    return Size(most * each, fix, _fit_length(copies, name, each))


def placeholder_size(name: str, entity: Entity, resolved: Resolved) -> Size:
    """The worst case of one placeholder of `entity`'s keys."""
    attr = entity.attrs.get(name)
    if attr is None:  # the tenant, an id from the token
        return Size(ID_MAX_LENGTH * ANY_CHARACTER_BYTES, _FEWER_IDS)
    where = _declared_in(entity, name)
    spec = attr.spec
    each, quantified = character_bytes(spec.pattern)
    if spec.type == "id":
        return _id_size(name, entity, resolved)
    if spec.type == "enum":
        values = spec.values or ("",)
        return Size(max(len(v.encode()) for v in values), f"shorten the values of {where}")
    if spec.type == "int":
        return Size(spec.width or 0, f"lower the width of {where}")
    if spec.type in ("datetime", "date"):
        return Size(DATETIME_BYTES if spec.type == "datetime" else DATE_BYTES, _FEWER_IDS)
    bounds = [n for n in (spec.max_length, quantified) if n is not None]
    length = min(bounds) if bounds else None
    if spec.type == "path":
        fit = _fit_path(entity, name, each, spec.max_items or 8)
        if length is None or spec.max_items is None:
            return Size(
                None,
                f"{{{name}}} is a path without max_items (its most parts) or max_length (the "
                f"most characters of a part); add both to {where}",
                fit,
            )
        fix = f"lower max_items or max_length of {where}, or {_ONE_BYTE}"
        return Size(spec.max_items * (length * each + 1) - 1, fix, fit)
    fit = _fit_length([entity], name, each)
    if length is None:
        return Size(
            None,
            f"{{{name}}} is a {spec.type} without max_length; add max_length to {where}",
            fit,
        )
    return Size(length * each, f"lower max_length of {where}, or {_ONE_BYTE}", fit)


def check_key_sizes(resolved: Resolved) -> Iterator[Problem]:
    """Keys that can outgrow DynamoDB's limits, one problem per template; an attribute that
    nothing bounds, one problem for all the keys it is in, its fix the max_length the
    tightest of them allows."""
    partitions = {keys[0] for i in resolved.all_indexes() if (keys := resolved.index_keys(i))}
    unbounded: dict[str, list[tuple[str, Template, Size, int]]] = {}
    for name, entity in resolved.entities.items():
        for attribute, template in entity.keys.items():
            limit = PARTITION_KEY_BYTES if attribute in partitions else SORT_KEY_BYTES
            path = f"entities.{name}.keys.{attribute}"
            sizes, total = _sizes(template, entity, resolved)
            open_ = [(n, size) for n, size in sizes if size.bytes is None]
            if open_:
                share = (limit - total) // len(open_)
                for placeholder, size in open_:
                    where = f"{name}:{placeholder}"
                    unbounded.setdefault(where, []).append((path, template, size, share))
                continue
            yield from _too_long(path, template, sizes, total, limit)
    for where, entries in unbounded.items():
        first_path, _, size, _ = entries[0]
        budget = min(share for *_, share in entries)
        edits = size.fit(budget) if size.fit else ()
        listed = ", ".join(f"{path.rsplit('.', 1)[1]} {t.source!r}" for path, t, _, _ in entries)
        yield Problem(
            first_path,
            f"{{{where.split(':')[1]}}} has no length limit, so {listed} can outgrow what "
            f"DynamoDB allows a key ({PARTITION_KEY_BYTES:,} bytes for a partition key, "
            f"{SORT_KEY_BYTES:,} for a sort key): " + size.fix,
            fix=edits,
        )


def _sizes(
    template: Template, entity: Entity, resolved: Resolved
) -> tuple[list[tuple[str, Size]], int]:
    """Each placeholder's size, and the bytes of the rest: literals, delimiters and the
    placeholders that have a bound."""
    total = len(template.segments) - 1
    sizes: list[tuple[str, Size]] = []
    for segment in template.segments:
        if segment.literal is not None:
            total += len(segment.literal)
            continue
        size = placeholder_size(str(segment.placeholder), entity, resolved)
        total += size.bytes or 0
        sizes.append((str(segment.placeholder), size))
    return sizes, total


def _too_long(
    path: str, template: Template, sizes: list[tuple[str, Size]], total: int, limit: int
) -> Iterator[Problem]:
    if total <= limit:
        return
    kind = "partition" if limit == PARTITION_KEY_BYTES else "sort"
    shares = ", ".join(f"{{{n}}} {s.bytes:,}" for n, s in sizes)
    ranked = sorted((size for _, size in sizes), key=lambda size: -(size.bytes or 0))
    cause = ranked[0]
    edits: tuple[Edit, ...] = ()
    for size in ranked:
        edits = size.fit(limit - (total - (size.bytes or 0))) if size.fit else ()
        if edits:
            cause = size
            break
    yield Problem(
        path,
        f"{template.source!r} can take {total:,} bytes with the longest values its attributes "
        f"allow ({shares}), more than the {limit:,} DynamoDB allows a {kind} key; " + cause.fix,
        fix=edits,
    )

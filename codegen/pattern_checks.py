"""Checks of access patterns: the fields each operation takes, and what they refer to."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from . import fixes, keytemplate
from .api_types import root_field
from .checks import RESERVED, SNAKE
from .diagnostics import Edit, Problem, toml_string
from .key_checks import check_placeholders
from .pytypes import py_name, snake
from .resolve import Resolved
from .spec import PatternSpec

_QUERY_ONLY = ("partition", "sort", "args", "returns", "page_size", "shards", "index", "direction")


def _get(path: str, name: str, pattern: PatternSpec, resolved: Resolved) -> Iterator[Problem]:
    for field in _QUERY_ONLY:
        if field in pattern.model_fields_set:
            yield Problem(f"{path}.{field}", f"`{field}` applies to queries only; remove it")
    entity = resolved.entities.get(pattern.entity or "")
    if entity is None:
        yield Problem(
            f"{path}.entity",
            f"a {pattern.operation} needs `entity`, one of: " + ", ".join(resolved.entities),
        )
        return
    table = resolved.spec.table
    names: set[str] = set()
    for attr in (table.partition_key, table.sort_key):
        if attr in entity.keys:
            names.update(entity.keys[attr].placeholders)
    if pattern.operation == "batch_get" and not names - {"tenant"}:
        yield Problem(path, f"{entity.name}'s key has no placeholder besides tenant to batch on")


def _templates(path: str, pattern: PatternSpec) -> Iterator[tuple[str, keytemplate.Template]]:
    if pattern.partition is not None:
        yield f"{path}.partition", keytemplate.parse(pattern.partition)
    if pattern.sort is not None:
        for op in sorted(pattern.sort.model_fields_set):
            value = getattr(pattern.sort, op)
            for text in value if isinstance(value, tuple) else (value,):
                yield f"{path}.sort.{op}", keytemplate.parse(text, condition=True)


def _close_names(names: tuple[str, ...], known: list[str]) -> list[str]:
    """Each name, or the known one it is a misspelling of; empty if one is neither."""
    fixed = []
    for name in names:
        close = [name] if name in known else difflib.get_close_matches(name, known, n=1)
        if not close:
            return []
        fixed.append(close[0])
    return fixed


def _query(path: str, name: str, pattern: PatternSpec, resolved: Resolved) -> Iterator[Problem]:
    if pattern.entity is not None:
        yield Problem(f"{path}.entity", "a query names what it reads in `returns`, not `entity`")
    if pattern.partition is None:
        yield Problem(f"{path}.partition", "a query needs a partition template")
    if resolved.index_keys(pattern.index) is None:
        close = difflib.get_close_matches(pattern.index, resolved.all_indexes(), n=1)
        yield Problem(
            f"{path}.index",
            f"unknown index {pattern.index!r}; use one of: " + ", ".join(resolved.all_indexes()),
            fix=(Edit(path, "index", toml_string(close[0])),) if close else (),
        )
    if pattern.sort is not None and len(pattern.sort.model_fields_set) != 1:
        yield Problem(
            f"{path}.sort", "give exactly one condition: eq, begins_with, between, lt, le, gt or ge"
        )
    size = pattern.page_size
    if size is not None and size.default > size.max:
        yield Problem(f"{path}.page_size", f"default {size.default} is above max {size.max}")
    returned = [resolved.entities.get(r) for r in pattern.returns]
    if not pattern.returns or None in returned:
        unknown = [r for r in pattern.returns if r not in resolved.entities]
        what = f"unknown entities {', '.join(unknown)}" if unknown else "none given"
        fixed = _close_names(pattern.returns, list(resolved.entities))
        yield Problem(
            f"{path}.returns",
            f"`returns` lists the entities the query reads ({what}); choose from: "
            + ", ".join(resolved.entities),
            fix=(Edit(path, "returns", fixes.names(fixed)),) if unknown and fixed else (),
        )
        return
    shard = pattern.shards.placeholder if pattern.shards else None
    extra = frozenset(pattern.args) | ({shard} if shard else set())
    try:
        templates = list(_templates(path, pattern))
    except keytemplate.TemplateError as exc:
        yield Problem(path, str(exc))
        return
    for entity in returned:
        assert entity is not None
        for where, template in templates:
            yield from check_placeholders(where, template, entity, extra)
    for arg, spec in pattern.args.items():
        if not SNAKE.match(arg) or arg in RESERVED or py_name(arg) in RESERVED:
            yield Problem(f"{path}.args.{arg}", "arg names must be snake_case and not reserved")
        if spec.type == "int" and spec.width is None:
            widths = {
                a.spec.width for e in returned if e and (a := e.attrs.get(arg)) and a.spec.width
            }
            yield Problem(
                f"{path}.args.{arg}",
                "an int arg needs `width`, the digits the key pads it to",
                fix=(Edit(path, f"args.{arg}", f'{{ type = "int", width = {widths.pop()} }}'),)
                if len(widths) == 1
                else (),
            )
        if spec.prefix_of is not None and any(
            e is not None and spec.prefix_of not in e.attrs for e in returned
        ):
            yield Problem(
                f"{path}.args.{arg}.prefix_of",
                f"{spec.prefix_of!r} is not an attribute of every returned entity",
            )
    used = {p for _, t in templates for p in t.placeholders}
    for arg in pattern.args:
        if arg not in used:
            yield Problem(f"{path}.args.{arg}", "declared but not used in partition or sort")
    if shard is not None and shard not in (templates[0][1].placeholders if templates else ()):
        yield Problem(f"{path}.shards.placeholder", f"{{{shard}}} must be in the partition")


def check_patterns(resolved: Resolved) -> Iterator[Problem]:
    names = set(resolved.spec.patterns)
    modules = {snake(entity): entity for entity in resolved.entities}
    for name, pattern in resolved.spec.patterns.items():
        path = f"patterns.{name}"
        if not SNAKE.match(name):
            fixed = snake(name)
            rename = f"rename it {fixed}" if SNAKE.match(fixed) else "rename it"
            yield Problem(path, f"pattern names are snake_case: {rename}")
        elif name in modules and (pattern.entity or (pattern.returns or ("",))[0]) != modules[name]:
            yield Problem(
                path,
                f"{name} is the name of {modules[name]}'s queries module: rename the pattern",
            )
        elif name.startswith("plan_") and name[5:] in names:
            yield Problem(
                path,
                f"plan_{name[5:]} is the name of {name[5:]}'s plan builder: rename the pattern",
            )
        if pattern.operation == "query":
            yield from _query(path, name, pattern, resolved)
        else:
            yield from _get(path, name, pattern, resolved)
        if pattern.list and (pattern.operation != "query" or pattern.field is False):
            yield Problem(f"{path}.list", "`list` shapes a query's root field; remove it")
        if pattern.by == "id" and pattern.operation != "get":
            yield Problem(f"{path}.by", '`by = "id"` applies to gets only; remove it')
        elif pattern.by == "id" and pattern.field is False:
            yield Problem(f"{path}.by", "a pattern without a field takes no global id; remove it")
        if pattern.changes is False and pattern.field is False:
            yield Problem(f"{path}.changes", "a pattern without a field has no subscription")
    yield from _root_fields(resolved)


def _root_fields(resolved: Resolved) -> Iterator[Problem]:
    """Each root Query field is one pattern's, and none is `node` (Node's refetch)."""
    taken: dict[str, str] = {}
    for name in sorted(resolved.spec.patterns):
        field = root_field(resolved, name)
        if field is None:
            continue
        where = (
            f"patterns.{name}.field" if resolved.spec.patterns[name].field else f"patterns.{name}"
        )
        if field == "node":
            yield Problem(
                where, "its root field would be `node`, Node's refetch: set another field"
            )
        elif field in taken:
            yield Problem(
                where,
                f"its root field {field} is already {taken[field]}'s: set another field",
            )
        else:
            taken[field] = name

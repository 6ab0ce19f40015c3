"""Lowering of an entity's key templates to key builders and parsers."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .imports import sort_imports
from .ir import KeyFnIR, KeysModuleIR, KeyTemplateIR, PartIR, SplitIR
from .keytemplate import Template
from .pytypes import KeyVar, snake
from .resolve import TABLE_INDEX, Entity, Resolved

Lookup = Callable[[str], KeyVar | None]


SIZED_TYPES = frozenset({"id", "string", "path"})
"""Placeholder types whose values have no length the key builder knows: a key holding one
is measured when built (keycodec.sized)."""


def render_template(template: Template, lookup: Lookup, limit: str | None = None) -> str:
    """Python source of a template's string, placeholders read from the variables of their
    (Python) names: an f-string, or a plain literal. With `limit` (the name of a keycodec
    byte limit), a key holding a value of unknown length is passed through keycodec.sized."""
    pieces: list[str] = []
    for segment in template.segments:
        if segment.literal is not None:
            pieces.append(segment.literal)
        else:
            var = lookup(str(segment.placeholder))
            assert var is not None, segment
            pieces.append("{" + var.render(var.param) + "}")
    text = "#".join(pieces) + ("#" if template.trailing_delimiter else "")
    if not any(s.placeholder for s in template.segments):
        return '"' + text + '"'
    expr = 'f"' + text + '"'
    sized = any(
        (var := lookup(name)) is not None and var.type in SIZED_TYPES
        for name in template.placeholders
    )
    if limit is None or not sized:
        return expr
    return f"_kc.sized({expr}, _kc.{limit}, {template.source!r})"


def params_of(templates: Sequence[Template], lookup: Lookup) -> list[KeyVar]:
    """Placeholders in order of first appearance, tenant first."""
    names: dict[str, None] = {"tenant": None}
    for template in templates:
        names.update(dict.fromkeys(template.placeholders))
    found = [lookup(name) for name in names]
    return [var for var in found if var is not None]


def signature(params: Sequence[KeyVar]) -> str:
    return ", ".join(f"{p.param}: {p.annotation}" for p in params)


def key_groups(entity: Entity, resolved: Resolved) -> list[tuple[str, list[str]]]:
    """(builder name, key attributes) for the table and each index the entity is in."""
    groups: list[tuple[str, list[str]]] = []
    for index in resolved.all_indexes():
        keys = resolved.index_keys(index)
        assert keys is not None
        attrs = [a for a in keys if a is not None and a in entity.keys]
        if attrs:
            name = "key" if index == TABLE_INDEX else f"{snake(index)}_key"
            groups.append((name, attrs))
    return groups


def _parse_exprs(template: Template, var: str, lookup: Lookup) -> dict[str, str]:
    """Placeholder name -> expression parsing it out of the split key `var`."""
    segments = template.segments
    path_at = next(
        (i for i, s in enumerate(segments) if s.placeholder and _is_path(s.placeholder, lookup)),
        None,
    )
    after = len(segments) - path_at - 1 if path_at is not None else 0
    exprs: dict[str, str] = {}
    for i, segment in enumerate(segments):
        if segment.placeholder is None or segment.placeholder in exprs:
            continue
        key_var = lookup(segment.placeholder)
        assert key_var is not None
        if path_at is None or i < path_at:
            raw = f"{var}[{i}]"
        elif i == path_at:
            end = f"len({var}) - {after}" if after else ""
            raw = f'"#".join({var}[{i}:{end}])'
        else:
            raw = f"{var}[{i - len(segments)}]"
        exprs[segment.placeholder] = key_var.parse(raw)
    return exprs


def _is_path(name: str, lookup: Lookup) -> bool:
    var = lookup(name)
    return var is not None and var.type == "path"


def key_limit(attribute: str, resolved: Resolved) -> str:
    """The keycodec limit of a key attribute: a partition key's of the table or an index,
    else a sort key's."""
    partitions = {keys[0] for i in resolved.all_indexes() if (keys := resolved.index_keys(i))}
    return "PARTITION_KEY_BYTES" if attribute in partitions else "SORT_KEY_BYTES"


def lower_keys(entity: Entity, resolved: Resolved) -> KeysModuleIR:
    lookup = entity.var
    templates: list[KeyTemplateIR] = []
    functions: list[KeyFnIR] = []
    all_vars: list[KeyVar] = []
    for name, attrs in key_groups(entity, resolved):
        group = [entity.keys[a] for a in attrs]
        params = params_of(group, lookup)
        all_vars.extend(params)
        exprs: dict[str, str] = {}
        splits: list[SplitIR] = []
        calls: list[str] = []
        checks: list[str] = []
        for attr, template in zip(attrs, group, strict=True):
            func = "_" + attr.lower()
            own = [
                p
                for p in params_of([template], lookup)
                if p.name != "tenant" or "tenant" in template.placeholders
            ]
            expr = render_template(template, lookup, key_limit(attr, resolved))
            templates.append(KeyTemplateIR(func, signature(own), expr))
            var = f"s{len(splits)}"
            fresh = {p: e for p, e in _parse_exprs(template, var, lookup).items() if p not in exprs}
            if fresh:
                splits.append(SplitIR(var, attr))
                exprs.update(fresh)
            call_args = ", ".join(p.param for p in own)
            calls.append(f'"{attr}": {func}({call_args})')
            checks.append(f'{func}({", ".join("parts." + p.param for p in own)}) != key["{attr}"]')
        parts_class = "".join(p.capitalize() for p in name.split("_")) + "Parts"
        functions.append(
            KeyFnIR(
                name=name,
                doc=f"{', '.join(attrs)} of an item of {entity.name}.",
                signature=signature(params),
                result="{" + ", ".join(calls) + "}",
                parse_name=f"parse_{name}",
                parts_class=parts_class,
                parts=tuple(PartIR(p.param, p.part_annotation, exprs[p.name]) for p in params),
                splits=tuple(splits),
                mismatch=" or ".join(checks),
            )
        )
    imports = [
        "from collections.abc import Mapping",
        "from typing import NamedTuple",
        "from keygraph import keycodec as _kc",
        "from keygraph.errors import BadArgument",
    ]
    types = {v.type for v in all_vars}
    if "path" in types:
        imports.append("from collections.abc import Sequence")
    if "datetime" in types:
        imports.append("from datetime import datetime")
    if "date" in types:
        imports.append("from datetime import date")
    enums = sorted({str(v.enum_class) for v in all_vars if v.type == "enum"})
    imports.extend(f"from ..models.enums import {e}" for e in enums)
    return KeysModuleIR(
        entity.module, entity.name, tuple(sort_imports(imports)), tuple(templates), tuple(functions)
    )

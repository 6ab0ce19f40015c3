"""The access-pattern worksheet: each pattern's operation, index, key condition and keys
rendered with example values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from keygraph import keycodec

from . import keytemplate
from .ir import EntityKeyRowIR, WorksheetRowIR
from .keytemplate import Template
from .lower_authz import pattern_who
from .lower_keys import Lookup
from .lower_queries import pattern_lookup, sort_templates
from .pytypes import KeyVar
from .resolve import TABLE_INDEX, Resolved

_EXAMPLE_TIME = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
_OPS = {"eq": "=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def example_value(var: KeyVar, later: bool = False) -> str:
    """A plausible rendered value of a placeholder, for documentation; `later` gives the
    upper bound of a range."""
    if var.name == "tenant":
        return "acme"
    if var.values:
        return var.values[-1 if later else 0]
    if var.type == "datetime":
        return keycodec.format_datetime(_EXAMPLE_TIME + timedelta(days=30 if later else 0))
    if var.type == "date":
        return keycodec.format_date((_EXAMPLE_TIME + timedelta(days=30 if later else 0)).date())
    if var.type == "int":
        return keycodec.format_int(1, var.width or 1)
    if var.type == "path":
        return keycodec.escape_path(("root", "eng"))
    return keycodec.escape(var.name.removesuffix("_id").replace("_", "-") + "-1")


def example(template: Template, lookup: Lookup, later: bool = False) -> str:
    parts: list[str] = []
    for segment in template.segments:
        var = lookup(segment.placeholder) if segment.placeholder else None
        parts.append(example_value(var, later) if var else str(segment.literal))
    return "#".join(parts) + ("#" if template.trailing_delimiter else "")


def _condition(attr: str, op: str, values: list[str]) -> str:
    if op == "begins_with":
        return f"begins_with({attr}, {values[0]})"
    if op == "between":
        return f"{attr} BETWEEN {values[0]} AND {values[1]}"
    if op == "collection":
        return f"{attr} = {values[0]} or begins_with({attr}, {values[0]}#)"
    return f"{attr} {_OPS[op]} {values[0]}"


def worksheet(resolved: Resolved) -> list[WorksheetRowIR]:
    rows: list[WorksheetRowIR] = []
    table = resolved.spec.table
    for name, pattern in resolved.spec.patterns.items():
        lookup = pattern_lookup(pattern, resolved)
        if pattern.operation in ("get", "batch_get"):
            entity = resolved.entities[str(pattern.entity)]
            attrs = (table.partition_key, table.sort_key)
            templates = [entity.keys[a] for a in attrs]
            index = TABLE_INDEX
            ops = [("eq", [t]) for t in templates]
        else:
            index = pattern.index
            keys = resolved.index_keys(index)
            assert keys is not None
            op, sort = sort_templates(pattern.sort)
            attrs = (keys[0], str(keys[1]))
            ops = [("eq", [keytemplate.parse(str(pattern.partition))])]
            ops += [(op, sort)] if op else []
        condition = " AND ".join(
            _condition(a, op, [f"`{t.source}`" for t in ts])
            for a, (op, ts) in zip(attrs, ops, strict=False)
        )
        sample = " AND ".join(
            _condition(a, op, [f"`{example(t, lookup, i > 0)}`" for i, t in enumerate(ts)])
            for a, (op, ts) in zip(attrs, ops, strict=False)
        )
        if pattern.shards:
            shards = pattern.shards
            condition += f" (one query per {{{shards.placeholder}}} in 0..{shards.count - 1})"
        rows.append(
            WorksheetRowIR(
                name=name,
                description=" ".join(pattern.description.split()).replace("|", "\\|"),
                operation=pattern.operation + (", fanned out" if pattern.shards else ""),
                index=f"{index} ({pattern.direction})" if pattern.operation == "query" else index,
                condition=condition,
                example=sample,
                who=pattern_who(resolved, name) if resolved.spec.authorization else "",
            )
        )
    return rows


def entity_keys(resolved: Resolved) -> list[EntityKeyRowIR]:
    """Each entity's key templates on the table and every index it is in."""
    rows: list[EntityKeyRowIR] = []
    for name, entity in sorted(resolved.entities.items()):
        for index in resolved.all_indexes():
            keys = resolved.index_keys(index) or (None, None)
            attrs = [a for a in keys if a is not None and a in entity.keys]
            if not attrs:
                continue
            sparse = any(
                entity.attrs[p].spec.optional
                for a in attrs
                for p in entity.keys[a].placeholders
                if p in entity.attrs
            )
            rows.append(
                EntityKeyRowIR(
                    entity=name,
                    type_value=entity.spec.type,
                    index=index + (" (sparse)" if sparse else ""),
                    keys=" / ".join(f"{a} = `{entity.keys[a].source}`" for a in attrs),
                    example=" / ".join(f"`{example(entity.keys[a], entity.var)}`" for a in attrs),
                )
            )
    return rows

"""Lowering of access patterns to plan builders and the functions that run them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from . import keytemplate
from .imports import sort_imports
from .ir import BatchGetIR, GetIR, QueriesModuleIR, QueryIR
from .keytemplate import Template
from .lower_guards import pattern_guard
from .lower_keys import params_of, render_template
from .pytypes import KeyVar, docstring, snake
from .resolve import TABLE_INDEX, Resolved
from .spec import DEFAULT_PAGE_SIZE, PatternSpec, SortSpec
from .summaries import summary_of

_SORT = "SORT_KEY_BYTES"
"""The keycodec limit a sort condition's values are held to, as DynamoDB holds them."""
_SORT_OPS = ("eq", "begins_with", "between", "lt", "le", "gt", "ge", "collection")


def sort_templates(sort: SortSpec | None) -> tuple[str, list[Template]]:
    """The sort condition's operator and parsed value template(s)."""
    if sort is None:
        return "", []
    for op in _SORT_OPS:
        value = getattr(sort, op)
        if value is not None:
            texts = list(value) if isinstance(value, tuple) else [value]
            return op, [keytemplate.parse(t, condition=True) for t in texts]
    return "", []


def pattern_lookup(pattern: PatternSpec, resolved: Resolved) -> Callable[[str], KeyVar | None]:
    """Placeholder name -> its KeyVar: a declared arg, the shard, or a returned attribute."""
    owner = pattern.entity or (pattern.returns[0] if pattern.returns else "")
    entity = resolved.entities.get(owner)

    def lookup(name: str) -> KeyVar | None:
        arg = pattern.args.get(name)
        if arg is not None:
            return KeyVar(name, arg.type, arg.width)
        return entity.var(name) if entity else None

    return lookup


def module_of(pattern: PatternSpec) -> str:
    return snake(pattern.entity or pattern.returns[0])


def _get(name: str, pattern: PatternSpec, resolved: Resolved) -> tuple[GetIR, list[KeyVar]]:
    entity = resolved.entities[str(pattern.entity)]
    table = resolved.spec.table
    templates = [entity.keys[table.partition_key], entity.keys[table.sort_key]]
    params = [p for p in params_of(templates, entity.var) if p.name != "tenant"]
    scope = ["tenant"] if entity.tenant_scoped else []
    call = ", ".join([*scope, *(p.param for p in params)])
    return GetIR(
        name=name,
        doc=docstring(pattern.description or f"{entity.name} by its key."),
        signature=", ".join([*(["tenant: str"] if scope else []), *_params(params)]),
        call=call,
        key_call=f"_keys_{entity.module}.key({call})",
        model=entity.name,
    ), params


def _batch_get(
    name: str, pattern: PatternSpec, resolved: Resolved
) -> tuple[BatchGetIR, list[KeyVar]]:
    get, params = _get(name, pattern, resolved)
    module = snake(get.model)
    scoped = resolved.entities[get.model].tenant_scoped
    tenant = "tenant, " if scoped else ""
    if len(params) == 1:
        ref_type, key_call = params[0].annotation, f"_keys_{module}.key({tenant}ref)"
    else:
        ref_type = "tuple[" + ", ".join(p.annotation for p in params) + "]"
        key_call = f"_keys_{module}.key({tenant}*ref)"
    scope = "tenant: str, " if scoped else ""
    return BatchGetIR(
        name, get.doc, scope, "tenant" if scoped else '""', ref_type, key_call, get.model
    ), params


def _params(params: list[KeyVar]) -> list[str]:
    return [f"{p.param}: {p.annotation}" for p in params]


def returned_classes(pattern: PatternSpec, resolved: Resolved) -> tuple[str, ...]:
    """The class of each entity a query returns: its model, or its summary on the index."""
    found = []
    for name in pattern.returns:
        summary = summary_of(resolved, resolved.entities[name], pattern.index)
        found.append(name if summary is None else summary.class_name)
    return tuple(found)


def _query(name: str, pattern: PatternSpec, resolved: Resolved) -> tuple[QueryIR, list[KeyVar]]:
    lookup = pattern_lookup(pattern, resolved)
    summaries = [summary_of(resolved, resolved.entities[r], pattern.index) for r in pattern.returns]
    classes = returned_classes(pattern, resolved)
    shard = pattern.shards.placeholder if pattern.shards else ""
    partition = keytemplate.parse(str(pattern.partition))
    op, sort = sort_templates(pattern.sort)
    params = [p for p in params_of([partition, *sort], lookup) if p.name not in ("tenant", shard)]
    scoped = "tenant" in partition.placeholders
    keys = resolved.index_keys(pattern.index)
    assert keys is not None
    partition_key, sort_key = keys
    table = resolved.spec.table
    key_attrs = [table.partition_key, table.sort_key]
    if pattern.index != TABLE_INDEX:
        key_attrs += [a for a in keys if a is not None]
    sort_expr = "None"
    if op == "collection":
        head = render_template(sort[0], lookup, _SORT)
        sort_expr = f'SortCondition("between", *_kc.collection({head}))'
    elif op == "between":  # a reversed range refused before any store call (DynamoDB would)
        low, high = (render_template(t, lookup, _SORT) for t in sort)
        bounds = f"{low}, {high}, {sort[0].source!r}, {sort[1].source!r}"
        sort_expr = f'SortCondition("between", *_kc.between({bounds}))'
    elif op:
        values = ", ".join(render_template(t, lookup, _SORT) for t in sort)
        sort_expr = f'SortCondition("{op}", {values})'
    size = pattern.page_size or DEFAULT_PAGE_SIZE
    args = ", ".join(f'"{p.name}": {p.render(p.param)}' for p in params)
    return QueryIR(
        name=name,
        doc=docstring(pattern.description or f"Query {name}."),
        signature=", ".join([*(["tenant: str"] if scoped else []), *_params(params)]),
        scope_arg="tenant" if scoped else '""',
        call=", ".join([*(["tenant"] if scoped else []), *(p.param for p in params)]),
        partition=render_template(partition, lookup, "PARTITION_KEY_BYTES"),
        index="None" if pattern.index == TABLE_INDEX else f'"{pattern.index}"',
        sort=sort_expr,
        forward=str(pattern.direction == "ascending"),
        page_const=f"{name.upper()}_PAGE",
        default_size=size.default,
        max_size=size.max,
        args="{" + args + "}",
        key_attributes="(" + ", ".join(f'"{a}"' for a in key_attrs) + ")",
        result=" | ".join(classes),
        returns=classes,
        typed=all(s is None or s.typed for s in summaries),
        shard_count=pattern.shards.count if pattern.shards else 0,
        shard_var=shard,
        index_partition_key=partition_key,
        merge_order=f'("{sort_key or table.sort_key}", "{key_attrs[0]}", "{key_attrs[1]}")',
    ), params


def float_attributes(resolved: Resolved, entities: tuple[str, ...]) -> tuple[str, ...]:
    """The attributes a read of these entities takes as floats: those that are a float in
    each of them that has one (plan.Floats)."""
    kinds: dict[str, set[str]] = {}
    for name in entities:
        for attr in resolved.entities[name].attrs.values():
            kinds.setdefault(attr.name, set()).add(attr.spec.type)
    return tuple(sorted(name for name, types in kinds.items() if types == {"float"}))


@dataclass
class _Module:
    gets: list[GetIR] = field(default_factory=list)
    batch_gets: list[BatchGetIR] = field(default_factory=list)
    queries: list[QueryIR] = field(default_factory=list)
    sharded: list[QueryIR] = field(default_factory=list)
    floats: list[tuple[str, str, str]] = field(default_factory=list)
    entity: str = ""
    imports: set[str] = field(default_factory=lambda: {"from keygraph.store import Session"})


def _guard(name: str, resolved: Resolved, params: list[KeyVar], batch: bool) -> str:
    if batch:
        refs = ["ref"] if len(params) == 1 else [f"ref[{n}]" for n in range(len(params))]
        given = {p.name: ref for p, ref in zip(params, refs, strict=True)}
    else:
        given = {p.name: p.param for p in params}
    return pattern_guard(resolved, name, given, batch)


def _floats(into: _Module, pattern: PatternSpec, resolved: Resolved) -> str:
    """The constant of the pattern's `floats`, added to the module once ("" when none)."""
    entities = (pattern.entity,) if pattern.entity else pattern.returns
    names = float_attributes(resolved, entities)
    if not names:
        return ""
    constant = "_".join(snake(entity).upper() for entity in entities) + "_FLOATS"
    literal = "frozenset({" + ", ".join(f'"{n}"' for n in names) + "})"
    read = " and ".join(entities)
    doc = f"The numbers read as floats from {read} items, as the models take them."
    if (constant, literal, doc) not in into.floats:
        into.floats.append((constant, literal, doc))
    return constant


def _add(module: str, into: _Module, name: str, pattern: PatternSpec, resolved: Resolved) -> None:
    imports = into.imports
    params: list[KeyVar]
    if resolved.spec.authorization is not None:
        imports |= {"from keygraph.errors import Forbidden", "from .. import authz as _authz"}
    floats = _floats(into, pattern, resolved)
    if pattern.operation == "get":
        get, params = _get(name, pattern, resolved)
        get = replace(get, guard=_guard(name, resolved, params, False), floats=floats)
        into.gets.append(get)
        imports |= {"from keygraph.plan import Get", f"from ..models.{module} import {get.model}"}
        imports.add(f"from ..keys import {module} as _keys_{module}")
    elif pattern.operation == "batch_get":
        batch, params = _batch_get(name, pattern, resolved)
        batch = replace(batch, guard=_guard(name, resolved, params, True), floats=floats)
        into.batch_gets.append(batch)
        imports |= {
            "from collections.abc import Sequence",
            "from keygraph import paging as _paging",
            "from keygraph.plan import Key",
            "from ..table import TABLE",
            f"from ..models.{module} import {batch.model}",
            f"from ..keys import {module} as _keys_{module}",
        }
    else:
        query, params = _query(name, pattern, resolved)
        query = replace(query, guard=_guard(name, resolved, params, False), floats=floats)
        (into.sharded if pattern.shards else into.queries).append(query)
        imports |= {
            "from keygraph import paging as _paging",
            "from keygraph.page import Page",
            "from keygraph.paging import PageSize",
            "from keygraph.plan import Item, Key, Query",
        }
        if "_kc." in query.partition + query.sort + query.args:
            imports.add("from keygraph import keycodec as _kc")
        if pattern.sort:
            imports.add("from keygraph.plan import SortCondition")
        imports |= {f"from ..models.{snake(c)} import {c}" for c in query.returns}
    for p in params:
        if p.type == "datetime":
            imports.add("from datetime import datetime")
        if p.type == "date":
            imports.add("from datetime import date")
        if p.type == "path":
            imports.add("from collections.abc import Sequence")
        if p.type == "enum":
            imports.add(f"from ..models.enums import {p.enum_class}")


def lower_queries(resolved: Resolved) -> list[QueriesModuleIR]:
    modules: dict[str, _Module] = {}
    for name, pattern in resolved.spec.patterns.items():
        module = module_of(pattern)
        entity = pattern.entity or pattern.returns[0]
        _add(module, modules.setdefault(module, _Module(entity=entity)), name, pattern, resolved)
    return [
        QueriesModuleIR(
            module=module,
            entity=m.entity,
            imports=tuple(sort_imports(m.imports)),
            gets=tuple(m.gets),
            batch_gets=tuple(m.batch_gets),
            queries=tuple(m.queries),
            sharded=tuple(m.sharded),
            floats=tuple(m.floats),
        )
        for module, m in sorted(modules.items())
    ]

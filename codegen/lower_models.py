"""Lowering of entities, structs and enum attributes to pydantic models."""

from __future__ import annotations

from .imports import sort_imports
from .ir import EnumIR, EnumMemberIR, FieldIR, ModelIR, SparseKeyIR, SummaryIR
from .lower_keys import key_groups, params_of
from .pytypes import docstring, field_annotation, load_expr, member_name, snake, store_expr
from .resolve import Attr, Entity, Resolved
from .stored_checks import Matcher, value_check
from .summaries import Summary, summary_of


def _field(attr: Attr, matchers: list[Matcher] | None = None) -> FieldIR:
    """The field of an attribute; with `matchers`, also the check of its loaded value (a
    pattern's matcher, when the check uses one, is added to `matchers`)."""
    spec = attr.spec
    annotation = field_annotation(spec, attr.enum_class)
    raw = f'item["{attr.name}"]'
    load = load_expr(spec, raw, attr.enum_class)
    if spec.optional:
        annotation += " | None = None"
        load = (
            f'item.get("{attr.name}")'
            if load == raw
            else f'None if item.get("{attr.name}") is None else {load}'
        )
    elif spec.default is not None:
        default = f"{attr.enum_class}({spec.default!r})" if attr.enum_class else repr(spec.default)
        annotation += f" = {default}"
        load = load_expr(spec, f'item.get("{attr.name}", {spec.default!r})', attr.enum_class)
    field = FieldIR(attr.name, annotation, store_expr(spec, f"self.{attr.name}"), load)
    if matchers is None:
        return field
    checked = value_check(attr.name, spec, field.var, attr.enum_class)
    if checked is None:
        return field
    check, matcher = checked
    if matcher is not None:
        matchers.append(matcher)
    return FieldIR(field.name, annotation, field.store, load, check)


def _imports(attrs: list[Attr], module: str) -> list[str]:
    lines = [
        "from typing import Any",
        "from collections.abc import Mapping",
        "from pydantic import BaseModel, ConfigDict",
        "from keygraph.plan import Item",
    ]
    types = {a.spec.type for a in attrs} | {
        "id" for a in attrs if a.spec.type == "list" and a.spec.of == "id"
    }
    annotations = {field_annotation(a.spec, a.enum_class) for a in attrs}
    common = [
        name
        for name, kind in (("Id", "id"), ("PathParts", "path"), ("UtcDatetime", "datetime"))
        if kind in types and (kind != "path" or name in annotations)
    ]
    if common:
        lines.append(f"from ._types import {', '.join(common)}")
    if types & {"datetime", "date"}:
        lines.append("from keygraph import keycodec as _kc")
    if "date" in types:
        lines.append("from datetime import date")
    if any(annotation.startswith("Annotated") for annotation in annotations):
        lines += ["from typing import Annotated", "from pydantic import Field"]
    if "float" in types:
        lines.append("from decimal import Decimal")
    for enum in sorted({str(a.enum_class) for a in attrs if a.enum_class}):
        lines.append(f"from .enums import {enum}")
    structs = {str(a.spec.of) for a in attrs if a.spec.type in ("list", "struct")}
    for struct in sorted(structs - {"id", "string"}):
        if snake(struct) != module:
            lines.append(f"from .{snake(struct)} import {struct}")
    return lines


def lower_struct(name: str, description: str, attrs: dict[str, Attr]) -> ModelIR:
    fields = tuple(_field(a) for a in attrs.values())
    return ModelIR(
        module=snake(name),
        class_name=name,
        doc=docstring(description or f"The {name} struct."),
        type_value="",
        imports=tuple(sort_imports(_imports(list(attrs.values()), snake(name)))),
        fields=fields,
        required=tuple(
            f for a, f in zip(attrs.values(), fields, strict=True) if not a.spec.optional
        ),
        optional=tuple(f for a, f in zip(attrs.values(), fields, strict=True) if a.spec.optional),
        key_calls=(),
        sparse_keys=(),
    )


def lower_entity(entity: Entity, resolved: Resolved) -> ModelIR:
    attrs = list(entity.attrs.values())
    matchers: list[Matcher] = []
    fields = tuple(_field(a, matchers) for a in attrs)
    checked = all(f.check is not None for f in fields)
    key_calls: list[str] = []
    sparse: list[SparseKeyIR] = []
    for name, key_attrs in key_groups(entity, resolved):
        params = params_of([entity.keys[a] for a in key_attrs], entity.var)
        args = ", ".join("tenant" if p.name == "tenant" else f"self.{p.name}" for p in params)
        call = f"_keys.{name}({args})"
        optional = [
            p.name for p in params if p.name in entity.attrs and entity.attrs[p.name].spec.optional
        ]
        if optional:
            condition = " and ".join(f"self.{o} is not None" for o in optional)
            sparse.append(SparseKeyIR(condition, call))
        else:
            key_calls.append(call)
    imports = _imports(attrs, entity.module)
    imports += ["from typing import ClassVar", f"from ..keys import {entity.module} as _keys"]
    if checked:
        imports.append("from keygraph import stored as _stored")
    return ModelIR(
        module=entity.module,
        class_name=entity.name,
        doc=docstring(entity.spec.description or f"The {entity.name} entity."),
        type_value=entity.spec.type,
        imports=tuple(sort_imports(imports)),
        fields=fields,
        required=tuple(f for a, f in zip(attrs, fields, strict=True) if not a.spec.optional),
        optional=tuple(f for a, f in zip(attrs, fields, strict=True) if a.spec.optional),
        key_calls=tuple(key_calls),
        sparse_keys=tuple(sparse),
        tenant_scoped=entity.tenant_scoped,
        matchers=tuple((m.name, repr(m.pattern)) for m in matchers) if checked else (),
    )


def lower_enums(resolved: Resolved) -> list[EnumIR]:
    """One StrEnum per enum attribute where it is declared (attributes_from reuses it)."""
    owners: list[tuple[str, dict[str, Attr]]] = list(resolved.struct_attrs.items())
    owners += [(name, e.attrs) for name, e in resolved.entities.items()]
    enums: dict[str, EnumIR] = {}
    for owner, attrs in owners:
        for attr in attrs.values():
            if attr.enum_class and attr.enum_class not in enums:
                members = tuple(EnumMemberIR(member_name(v), v) for v in attr.spec.values or ())
                doc = docstring(attr.spec.description or f"Values of {owner}.{attr.name}.")
                enums[attr.enum_class] = EnumIR(attr.enum_class, doc, members)
    return [enums[name] for name in sorted(enums)]


def lower_summary(summary: Summary) -> SummaryIR:
    """A summary model: fields parsed out of the keys it holds, then the included ones."""
    entity = summary.entity
    fields: list[FieldIR] = []
    for name, attr in entity.attrs.items():
        if name in summary.from_keys:
            var = "_" + summary.from_keys[name]
            field = _field(attr)
            fields.append(FieldIR(name, field.annotation, field.store, f"{var}.{name}"))
        elif name in summary.included:
            fields.append(_field(attr))
    builders = dict.fromkeys(summary.from_keys.values())
    attrs = [entity.attrs[f.name] for f in fields]
    imports = _imports(attrs, summary.module)
    imports += ["from typing import ClassVar", f"from ..keys import {entity.module} as _keys"]
    unused = {"from keygraph.plan import Item"}
    if not any("_kc." in f.load for f in fields):
        unused.add("from keygraph import keycodec as _kc")
    imports = [line for line in imports if line not in unused]
    index = summary.index
    return SummaryIR(
        module=summary.module,
        class_name=summary.class_name,
        doc=docstring(
            f"What index {index} holds of {entity.name} items: "
            + ", ".join(f.name for f in fields)
            + "."
        ),
        type_value=entity.spec.type,
        imports=tuple(sort_imports(imports)),
        fields=tuple(fields),
        key_reads=tuple((f"_{b}", f"_keys.parse_{b}") for b in builders),
    )


def lower_summaries(resolved: Resolved) -> list[SummaryIR]:
    """Every summary a query of the spec returns."""
    found: dict[str, Summary] = {}
    for pattern in resolved.spec.patterns.values():
        if pattern.operation != "query":
            continue
        for name in pattern.returns:
            summary = summary_of(resolved, resolved.entities[name], pattern.index)
            if summary is not None:
                found.setdefault(summary.class_name, summary)
    return [lower_summary(found[name]) for name in sorted(found)]

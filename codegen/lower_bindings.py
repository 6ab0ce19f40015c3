"""Lowering of the spec to its API's bindings (api.py): the generated function answering each
root field of api.graphql with its arguments, the attribute each object field reads, and
each Node's key parts and get. Derived from the same declarations as the SDL (lower_api.py),
so a field and what answers it cannot drift apart."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from . import keytemplate
from .api_objects import shown_as
from .api_types import arg_binding, field_name, root_field
from .field_guards import field_guards
from .imports import sort_imports
from .ir_api import (
    ApiIR,
    ArgBindingIR,
    BindingsIR,
    BoundIR,
    GuardBindingIR,
    RelationBindingIR,
    RootBindingIR,
    TypeBindingIR,
)
from .lower_kept import kept_function
from .lower_queries import module_of
from .lower_watches import KIND as CHANGE_KIND
from .lower_watches import watch_bindings
from .lower_writes import write_bindings
from .pattern_params import key_params, query_params
from .pytypes import snake
from .relations import Relation, batch_for, pattern_rules, relations_of
from .resolve import Resolved
from .rules import owners as rule_owners
from .summaries import summary_of


def lower_bindings(resolved: Resolved, api: ApiIR) -> BindingsIR:
    spec = resolved.spec
    gets = {str(p.entity): name for name, p in spec.patterns.items() if p.operation == "get"}
    functions: dict[str, set[str]] = {}
    roots = _roots(resolved, functions)
    shown = {d.name: d for d in api.definitions if d.kind == "type"}
    types: list[TypeBindingIR] = []
    classes: set[str] = set()
    guards = field_guards(resolved)
    for type_name, (attrs, owner) in sorted(_models(resolved).items()):
        definition = shown.get(type_name)
        if definition is None:
            continue
        classes.add(type_name)
        fields = {f.name for f in definition.fields}
        mapping = tuple((field_name(a), a) for a in attrs if field_name(a) in fields)
        guarded = tuple(
            GuardBindingIR(field_name(a), f"_authz.{guard.function}", guard.owners)
            for a in attrs
            if field_name(a) in fields and (guard := guards.get((owner, a))) is not None
        )
        node: tuple[ArgBindingIR, ...] = ()
        get = ""
        entity = resolved.entities.get(type_name)
        if entity is not None and "id" in fields and type_name in gets:
            node = tuple(arg_binding(p, in_id=True) for p in key_params(resolved, type_name))
            get = gets[type_name]
        scoped = entity.tenant_scoped if entity is not None else True
        related = tuple(_relations(resolved, type_name)) if entity is not None else ()
        copies = tuple(
            name
            for name in resolved.entities
            if name != type_name and shown_as(resolved, name) == type_name
        )
        classes.update(copies)
        types.append(TypeBindingIR(type_name, mapping, node, get, scoped, guarded, related, copies))
    enums = tuple(
        sorted(d.name for d in api.definitions if d.kind == "enum" and d.name != CHANGE_KIND.name)
    )
    relations = [r for t in types for r in t.relations]
    relations += [r.via for r in relations if r.via is not None]
    _note_functions(resolved, types, relations, functions)
    watches, watching = watch_bindings(resolved)
    asks = any(t.guards for t in types) or any(r.guard for r in relations)
    runtime = ["Api", "Arg", "Root", "Type", *(["Watch"] if watches else [])]
    runtime += ["Guard"] if asks or any(w.guard for w in watches) else []
    runtime += ["Bound", "Relation"] if relations else []
    imports = ["from pathlib import Path", f"from keygraph.api import {', '.join(runtime)}"]
    imports += [f"from .models.{snake(c)} import {c}" for c in sorted(classes)]
    if enums:
        imports.append(f"from .models.enums import {', '.join(enums)}")
    imports += [
        f"from .queries.{module} import {', '.join(sorted(names))}"
        for module, names in sorted(functions.items())
    ]
    if any(t.guards for t in types) or any(r.guard for r in relations):
        imports.append("from . import authz as _authz")
    writes, needed = write_bindings(resolved)
    imports += [line for line in [*needed, *watching] if line not in imports]
    bindings = BindingsIR(tuple(sort_imports(imports)), tuple(roots), tuple(types), enums, writes)
    return replace(bindings, watches=watches)


def _note_functions(
    resolved: Resolved,
    types: list[TypeBindingIR],
    relations: list[RelationBindingIR],
    functions: dict[str, set[str]],
) -> None:
    """Notes in `functions`, by queries module, every function the bindings name beyond
    the root fields': Nodes' gets, relations' patterns and batch gets, ranged patterns and
    first pages (with a query's page sizes)."""
    spec = resolved.spec
    for name in {t.get for t in types} | {n for r in relations for n in (r.function, r.batch)}:
        if name:
            pages = {_page(name)} if spec.patterns[name].operation == "query" else set()
            functions.setdefault(module_of(spec.patterns[name]), set()).update({name} | pages)
    for relation in relations:
        if relation.ranged:
            functions.setdefault(module_of(spec.patterns[relation.ranged]), set()).add(
                relation.ranged
            )
        if relation.first_page is not None:
            module = module_of(spec.patterns[relation.function])
            functions[module].add(relation.first_page[1])


def _roots(resolved: Resolved, functions: dict[str, set[str]]) -> list[RootBindingIR]:
    """Each root field's binding, noting in `functions` what each queries module gives."""
    roots: list[RootBindingIR] = []
    for name, pattern in sorted(resolved.spec.patterns.items()):
        field = root_field(resolved, name)
        if field is None:
            continue
        page = _page(name) if pattern.operation == "query" else ""
        functions.setdefault(module_of(pattern), set()).update({name, page} - {""})
        if pattern.operation == "query":
            args = tuple(arg_binding(p) for p in query_params(resolved, name))
        else:
            keyed = key_params(resolved, str(pattern.entity))
            args = tuple(arg_binding(p, in_id=pattern.by == "id") for p in keyed)
        root = RootBindingIR(field, pattern.operation, name, args, _scoped(resolved, name))
        by_id = str(pattern.entity) if pattern.by == "id" else ""
        roots.append(replace(root, page=page, by_id=by_id, listed=pattern.list))
    return roots


def _page(pattern: str) -> str:
    """The constant of a query's page sizes in its module."""
    return f"{pattern.upper()}_PAGE"


def _scoped(resolved: Resolved, name: str) -> bool:
    """Whether a pattern's function takes the caller's tenant first."""
    pattern = resolved.spec.patterns[name]
    if pattern.operation == "query":
        return "tenant" in keytemplate.parse(str(pattern.partition)).placeholders
    return resolved.entities[str(pattern.entity)].tenant_scoped


def _relations(resolved: Resolved, entity: str) -> Iterator[RelationBindingIR]:
    for relation in relations_of(resolved, entity):
        yield _relation(resolved, relation)


def _relation(resolved: Resolved, relation: Relation) -> RelationBindingIR:
    """A relation's binding; through `via`, with that relation of its items' binding."""
    name, operation = relation.pattern, relation.operation
    bound = tuple(BoundIR(var.name, var.param, attr.name) for var, attr in relation.bound)
    args = tuple(arg_binding(p) for p in relation.free)
    binding = RelationBindingIR(
        field_name(relation.name), operation, name, bound, args, _scoped(resolved, name)
    )
    if operation == "query":
        via = None
        if relation.via is not None:
            (returned,) = resolved.spec.patterns[name].returns
            followed = {r.name: r for r in relations_of(resolved, returned)}
            via = _relation(resolved, followed[relation.via])
        kept = None
        if relation.first_page is not None:
            kept = (relation.first_page, kept_function(name))
        bounds = tuple(arg_binding(p) for p in relation.bounds)
        binding = replace(binding, ranged=relation.ranged or "", bounds=bounds)
        return replace(binding, page=_page(name), via=via, listed=relation.listed, first_page=kept)
    rule = pattern_rules(resolved).get(name)
    if rule is not None:
        owners = tuple(rule_owners(rule))
        binding = replace(binding, guard=f"_authz.may_run_{name}", owners=owners)
    if operation == "batch_get":
        ((_, attr),) = relation.bound
        return replace(binding, most=attr.spec.max_items)
    return replace(binding, batch=batch_for(resolved, name) or "")


def _models(resolved: Resolved) -> dict[str, tuple[list[str], str]]:
    """Every class a type may show (entities, their summaries, structs): its attributes,
    and whose they are (the entity's, or the struct's own name)."""
    found: dict[str, tuple[list[str], str]] = {}
    for name, entity in resolved.entities.items():
        found[name] = list(entity.attrs), name
        for index in resolved.all_indexes():
            summary = summary_of(resolved, entity, index)
            if summary is not None:
                held = set(summary.from_keys) | set(summary.included)
                found[summary.class_name] = [a for a in entity.attrs if a in held], name
    for name, attrs in resolved.struct_attrs.items():
        found[name] = list(attrs), name
    return found

"""Lowering of the spec to the GraphQL API its defaults give (api.graphql): every entity a
pattern returns is an object type of its name with its attributes as camelCase fields, and
every pattern a root Query field named by its camelCase name with its key arguments (never
the tenant): a get answers the object or null, a batch get a list in the order asked, a
query a Relay connection (of a union when it returns several entities). An entity with a
get pattern implements Node: its global id names its type and key values, and `node`
refetches it."""

from __future__ import annotations

import re
from dataclasses import replace

from .api_types import (
    Collected,
    argument_type,
    connection_item,
    described,
    field_name,
    object_type,
    root_field,
)
from .field_guards import field_guards
from .ir_api import ApiIR, GqlFieldIR, GqlTypeIR
from .lower_queries import returned_classes
from .lower_watches import watch_fields
from .lower_writes import write_fields
from .pattern_params import key_params, query_params
from .pytypes import KeyVar
from .relations import pattern_rules
from .resolve import Attr, Entity, Resolved
from .summaries import Summary, summary_of

SCALARS = {
    "DateTime": "An instant in ISO 8601 with its zone offset.",
    "Date": "A calendar date in ISO 8601 (YYYY-MM-DD).",
    "Long": "An integer beyond GraphQL's 32-bit Int, as a JSON number.",
}
PAGE_INFO = GqlTypeIR(
    "type",
    "PageInfo",
    "Where a page starts and ends, and whether another follows.",
    fields=(
        GqlFieldIR("hasNextPage", "Boolean!", ""),
        GqlFieldIR("hasPreviousPage", "Boolean!", "Always false: pages go forward."),
        GqlFieldIR("startCursor", "String", "The first edge's cursor; null on an empty page."),
        GqlFieldIR("endCursor", "String", "Continues after this page."),
    ),
)
NODE = GqlTypeIR(
    "interface",
    "Node",
    "An object with a global id, which `node` refetches.",
    fields=(GqlFieldIR("id", "ID!", "Its global id."),),
)


def lower_api(resolved: Resolved) -> ApiIR:
    found = Collected({}, [], frozenset(field_guards(resolved)), pattern_rules(resolved))
    refetchable = {
        str(pattern.entity)
        for pattern in resolved.spec.patterns.values()
        if pattern.operation == "get"
    }
    for name, pattern in sorted(resolved.spec.patterns.items()):
        if pattern.operation == "query":
            found.roots.append(_query_root(found, resolved, name, refetchable))
            continue
        entity = str(pattern.entity)
        object_type(found, resolved, entity, entity in refetchable)
        params = key_params(resolved, entity)
        field, description = root_field(resolved, name), pattern.description
        if pattern.operation == "get":
            args = ", ".join(f"{field_name(p.name)}: {argument_type(p)}" for p in params)
            found.roots.append(GqlFieldIR(field, entity, description, args))
        else:
            found.roots.append(_batch_root(found, field, description, entity, params))
    mutations = write_fields(found, resolved, refetchable)
    return _program(found, mutations, watch_fields(found, resolved))


def _query_root(
    found: Collected, resolved: Resolved, name: str, refetchable: set[str]
) -> GqlFieldIR:
    """A query pattern's root field, declaring what its connection holds."""
    pattern = resolved.spec.patterns[name]
    field = root_field(resolved, name)
    classes = returned_classes(pattern, resolved)
    for entity_name, class_name in zip(pattern.returns, classes, strict=True):
        entity = resolved.entities[entity_name]
        summary = summary_of(resolved, entity, pattern.index)
        attrs = entity.attrs if summary is None else _summary_attrs(summary, entity)
        node = summary is None and entity_name in refetchable
        about = None if summary is None else f"What {pattern.index} holds of {entity_name}."
        object_type(found, resolved, class_name, node, attrs, about, entity_name)
    item = connection_item(resolved, name)
    if len(classes) > 1:
        found.types[item] = GqlTypeIR("union", item, f"What {field} returns.", members=classes)
    _connection(found, item)
    args = [f"{field_name(p.name)}: {argument_type(p)}" for p in query_params(resolved, name)]
    args += ["first: Int", "after: String"]
    return GqlFieldIR(field, f"{item}Connection!", pattern.description, ", ".join(args))


def _batch_root(
    found: Collected, field: str, description: str, entity: str, params: list[KeyVar]
) -> GqlFieldIR:
    """A batch get's root field: a list of ids, or of key inputs for a compound key."""
    if len(params) == 1:
        (param,) = params
        args = f"{field_name(param.name)}s: [{argument_type(param)}]!"
    else:
        key = f"{entity}Key"
        fields = tuple(GqlFieldIR(field_name(p.name), argument_type(p), "") for p in params)
        found.types[key] = GqlTypeIR("input", key, f"The key of one {entity}.", fields=fields)
        args = f"keys: [{key}!]!"
    return GqlFieldIR(field, f"[{entity}]!", description, args)


def _summary_attrs(summary: Summary, entity: Entity) -> dict[str, Attr]:
    """The attributes a summary holds: those in its keys, then the included ones."""
    held = set(summary.from_keys) | set(summary.included)
    return {name: attr for name, attr in entity.attrs.items() if name in held}


def _connection(found: Collected, node: str) -> None:
    """Declares the Relay connection of `node` (its edge, and PageInfo)."""
    if f"{node}Connection" in found.types:
        return
    found.types["PageInfo"] = PAGE_INFO
    found.types[f"{node}Edge"] = GqlTypeIR(
        "type",
        f"{node}Edge",
        "One node of a page.",
        fields=(
            GqlFieldIR("node", f"{node}!", ""),
            GqlFieldIR("cursor", "String!", "Continues after this node."),
        ),
    )
    found.types[f"{node}Connection"] = GqlTypeIR(
        "type",
        f"{node}Connection",
        "A page, Relay style.",
        fields=(
            GqlFieldIR("edges", f"[{node}Edge!]!", ""),
            GqlFieldIR("pageInfo", "PageInfo!", ""),
        ),
    )


def _program(
    found: Collected, mutations: list[GqlFieldIR], subscriptions: list[GqlFieldIR]
) -> ApiIR:
    """Scalars first, then every type by name, then Query, Mutation and Subscription;
    nothing without a pattern."""
    if not found.roots:
        return ApiIR(())
    types = dict(found.types)
    roots = sorted(found.roots, key=lambda f: f.name)
    if any(t.implements == "Node" for t in types.values()):
        types["Node"] = NODE
        roots.insert(0, GqlFieldIR("node", "Node", "Any object by its global id.", "id: ID!"))
    fields = [f for t in types.values() for f in t.fields] + roots + mutations + subscriptions
    named = set(re.findall(r"\w+", " ".join(f"{f.type} {f.args}" for f in fields)))
    scalars = tuple(GqlTypeIR("scalar", n, about) for n, about in SCALARS.items() if n in named)
    query = GqlTypeIR("type", "Query", "The reads the spec names.", fields=tuple(roots))
    definitions = (*scalars, *(types[n] for n in sorted(types)), query)
    if mutations:
        about = "The writes the spec names, each with its invariants in one transaction."
        definitions += (GqlTypeIR("type", "Mutation", about, fields=tuple(mutations)),)
    if subscriptions:
        about = "Items as writes change them, from the table's change stream."
        definitions += (GqlTypeIR("type", "Subscription", about, fields=tuple(subscriptions)),)
    return ApiIR(tuple(_printed(d) for d in definitions))


def _printed(definition: GqlTypeIR) -> GqlTypeIR:
    """The definition with its descriptions as SDL prints them."""
    fields = tuple(replace(f, description=described(f.description)) for f in definition.fields)
    return replace(definition, description=described(definition.description), fields=fields)

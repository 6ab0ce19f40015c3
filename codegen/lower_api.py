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

from .api_objects import Collected, entity_type, pattern_item
from .api_types import argument_type, described, field_name, first_argument, root_field
from .field_guards import field_guards
from .ir_api import ApiIR, GqlFieldIR, GqlTypeIR
from .lower_watches import watch_fields
from .lower_writes import write_fields
from .pattern_params import key_params, query_params
from .pytypes import KeyVar
from .relations import pattern_rules, refusable
from .resolve import Resolved

SCALARS = {
    "DateTime": "An instant in ISO 8601 with its zone offset.",
    "Date": "A calendar date in ISO 8601 (YYYY-MM-DD).",
    "Long": "An integer beyond GraphQL's 32-bit Int, as a JSON number.",
}
NODE = GqlTypeIR(
    "interface",
    "Node",
    "An object with a global id, which `node` refetches.",
    fields=(GqlFieldIR("id", "ID!", "Its global id."),),
)


def lower_api(resolved: Resolved) -> ApiIR:
    refetchable = frozenset(
        str(pattern.entity)
        for pattern in resolved.spec.patterns.values()
        if pattern.operation == "get"
    )
    rules = pattern_rules(resolved)
    found = Collected({}, [], frozenset(field_guards(resolved)), rules, refetchable)
    for name, pattern in sorted(resolved.spec.patterns.items()):
        field = root_field(resolved, name)
        if field is None:
            continue
        if pattern.operation == "query":
            found.roots.append(_refusable(found, name, _query_root(found, resolved, name, field)))
            continue
        entity = entity_type(found, resolved, str(pattern.entity))
        params = key_params(resolved, entity)
        description = pattern.description
        if pattern.operation == "get" and pattern.by == "id":
            found.roots.append(GqlFieldIR(field, entity, description, "id: ID!"))
        elif pattern.operation == "get":
            args = ", ".join(f"{field_name(p.name)}: {argument_type(p)}" for p in params)
            found.roots.append(GqlFieldIR(field, entity, description, args))
        else:
            batch = _batch_root(found, field, description, entity, params)
            found.roots.append(_refusable(found, name, batch))
    mutations = write_fields(found, resolved)
    return _program(found, mutations, watch_fields(found, resolved))


def _refusable(found: Collected, pattern: str, root: GqlFieldIR) -> GqlFieldIR:
    """A root field of a list or page, nullable where its pattern's rule may refuse the
    caller, so that a refusal nulls that field alone, as a relation's does."""
    if not refusable(found.rules.get(pattern)):
        return root
    text = root.description
    stop = "" if not text or text.endswith((".", "!", "?")) else "."
    text = f"{text}{stop} Null with FORBIDDEN for a caller its rule refuses."
    return replace(root, type=root.type.removesuffix("!"), description=text)


def _query_root(found: Collected, resolved: Resolved, name: str, field: str) -> GqlFieldIR:
    """A query pattern's root field, declaring what its connection holds."""
    pattern = resolved.spec.patterns[name]
    item = pattern_item(found, resolved, name)
    args = [f"{field_name(p.name)}: {argument_type(p)}" for p in query_params(resolved, name)]
    first = first_argument(pattern)
    if pattern.list:
        args.append(first)
        return GqlFieldIR(field, f"[{item}!]!", pattern.description, ", ".join(args))
    args += [first, "after: String"]
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

"""Lowering of the spec to its API's subscriptions, when its table has a change stream that
holds items' images: each entity a `get` pattern reads (and so a Node) gets
`xChanged(<its key>, after: String): XChange!`, the item as each write leaves it (as it was,
for a delete), under the same rule as its get pattern; and each query pattern of one
partition reading one entity gets `<pattern>Changed(<its arguments>, after: String)`, the
changes of the items it reads (or read), under its rule (api.graphql), with the bindings
that follow them on the stream (api.py, keygraph.api.watches). A pattern with `changes =
false` keeps its binding, with no field: an extension's subscription may follow it."""

from __future__ import annotations

from .api_objects import Collected, shown_as
from .api_types import arg_binding, argument_type, field_name, root_field
from .ir_api import GqlFieldIR, GqlTypeIR, WatchBindingIR
from .lower_queries import module_of
from .lower_writes import payload_field
from .pattern_params import key_params, query_params
from .pytypes import KeyVar, snake
from .relations import pattern_rules
from .resolve import Resolved
from .rules import owners

IMAGES = ("NEW_IMAGE", "NEW_AND_OLD_IMAGES")
"""Stream views whose records hold the item: a subscription shows it."""
KIND = GqlTypeIR(
    "enum", "ChangeKind", "How an item changed.", values=("CREATED", "UPDATED", "DELETED")
)


def watched(resolved: Resolved, kept: bool = False) -> dict[str, str]:
    """Each entity that has subscriptions, by the get pattern whose rule they follow: one
    with a root field and changes. `kept`: those whose only such pattern has `changes =
    false` instead, whose watch has no field."""
    if resolved.spec.table.stream not in IMAGES:
        return {}
    found: dict[str, str] = {}
    hidden: dict[str, str] = {}
    for name, pattern in sorted(resolved.spec.patterns.items()):
        entity = resolved.entities.get(str(pattern.entity))
        if pattern.operation != "get" or root_field(resolved, name) is None:
            continue
        if entity is not None and entity.tenant_scoped:
            (hidden if pattern.changes is False else found).setdefault(entity.name, name)
    if kept:
        return {entity: name for entity, name in hidden.items() if entity not in found}
    return found


def watched_patterns(resolved: Resolved, kept: bool = False) -> dict[str, str]:
    """Each query pattern that has a subscription (one partition, one entity, its field's
    name free), by the entity it reads; `kept`: each with `changes = false` instead."""
    if resolved.spec.table.stream not in IMAGES:
        return {}
    gets = [*watched(resolved), *watched(resolved, kept=True)]
    taken = {f"{payload_field(entity)}Changed" for entity in gets}
    found: dict[str, str] = {}
    for name, pattern in sorted(resolved.spec.patterns.items()):
        if pattern.operation != "query" or pattern.shards or len(pattern.returns) != 1:
            continue
        if root_field(resolved, name) is None or (pattern.changes is False) != kept:
            continue
        entity = resolved.entities.get(pattern.returns[0])
        if entity is not None and entity.tenant_scoped and _field(resolved, name) not in taken:
            found[name] = entity.name
    return found


def _field(resolved: Resolved, pattern: str) -> str:
    return f"{root_field(resolved, pattern)}Changed"


def _change(found: Collected, entity: str) -> str:
    """The change type of `entity`, declared in `found`."""
    change = f"{entity}Change"
    shown = (
        GqlFieldIR("kind", "ChangeKind!", ""),
        GqlFieldIR(
            payload_field(entity), f"{entity}!", "As the write left it; as it was, deleted."
        ),
        GqlFieldIR("cursor", "String!", "Pass it as `after` to resume after this change."),
    )
    found.types["ChangeKind"] = KIND
    found.types[change] = GqlTypeIR("type", change, f"A {entity} written.", fields=shown)
    return change


def watch_fields(found: Collected, resolved: Resolved) -> list[GqlFieldIR]:
    """The Subscription fields, their change types declared in `found`."""
    fields = []
    for entity in sorted(watched(resolved)):
        change = _change(found, entity)
        args = _arguments(key_params(resolved, entity))
        text = (
            f"The {entity} at this key as each write changes it, from now or after a cursor; "
            "under its get pattern's rule."
        )
        fields.append(GqlFieldIR(f"{payload_field(entity)}Changed", f"{change}!", text, args))
    for name, entity in watched_patterns(resolved).items():
        change = _change(found, shown_as(resolved, entity))
        args = _arguments(query_params(resolved, name))
        text = (
            f"The changes of the {entity} items {name} reads, from now or after a cursor (one "
            "that leaves what it reads is shown once more, as it now is); under its rule."
        )
        fields.append(GqlFieldIR(_field(resolved, name), f"{change}!", text, args))
    return fields


def _arguments(params: list[KeyVar]) -> str:
    """A subscription's arguments: its key's or pattern's, then `after`."""
    given = [f"{field_name(p.name)}: {argument_type(p)}" for p in params]
    return ", ".join([*given, "after: String"])


def watch_bindings(resolved: Resolved) -> tuple[tuple[WatchBindingIR, ...], list[str]]:
    """Each Subscription field as api.py binds it, and the imports it needs."""
    rules = pattern_rules(resolved)
    found, imports = [], set()
    for kept in (False, True):
        for entity, get in sorted(watched(resolved, kept).items()):
            module = snake(entity)
            imports.add(f"from .keys import {module} as _keys_{module}")
            args = tuple(arg_binding(p) for p in key_params(resolved, entity))
            rule = rules.get(get)
            guard = "" if rule is None else f"_authz.may_run_{get}"
            found.append(
                WatchBindingIR(
                    f"{payload_field(entity)}Changed",
                    resolved.entities[entity].spec.type,
                    args,
                    f"_keys_{module}.key",
                    guard,
                    () if rule is None else tuple(owners(rule)),
                    fielded=not kept,
                )
            )
    for kept in (False, True):
        for name, entity in watched_patterns(resolved, kept).items():
            pattern = resolved.spec.patterns[name]
            imports.add(f"from .queries.{module_of(pattern)} import plan_{name}")
            rule = rules.get(name)
            found.append(
                WatchBindingIR(
                    _field(resolved, name),
                    resolved.entities[entity].spec.type,
                    tuple(arg_binding(p) for p in query_params(resolved, name)),
                    "",
                    "" if rule is None else f"_authz.may_run_{name}",
                    () if rule is None else tuple(owners(rule)),
                    f"plan_{name}",
                    "" if pattern.index == "table" else pattern.index,
                    fielded=not kept,
                )
            )
    if found:
        imports.add("from .entities import ENTITIES, TENANT_PREFIXES")
        if any(w.guard for w in found):
            imports.add("from . import authz as _authz")
    return tuple(found), sorted(imports)

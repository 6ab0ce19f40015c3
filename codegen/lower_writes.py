"""Lowering of each entity's writes to its API: the SDL's Mutation fields (createX, updateX
with `expectedVersion` where the entity has a version, deleteX), their inputs and payloads
(api.graphql), and the bindings that write them with their claims, copies and counts
(api.py, keygraph.writes)."""

from __future__ import annotations

import re

from . import rules
from .api_objects import Collected, entity_type
from .api_types import attribute_type, field_name
from .authz import collect
from .ir_api import GqlFieldIR, GqlTypeIR, WriteBindingIR
from .lower_queries import module_of
from .pattern_params import key_params
from .pytypes import snake
from .resolve import Attr, Entity, Resolved
from .writes import (
    VERSION,
    counters_of,
    counts_of,
    derived_of,
    expiry_of,
    fixed,
    generated_of,
    owned_of,
    parents_of,
)

VERBS = {"create": "Creates", "update": "Changes", "delete": "Deletes"}


def write_fields(found: Collected, resolved: Resolved) -> list[GqlFieldIR]:
    """The Mutation fields of every entity with writes, declaring their types in `found`."""
    fields = []
    for entity in resolved.entities.values():
        writes = entity.spec.writes
        if not writes or entity.spec.mutations is False:
            continue
        name = entity.name
        entity_type(found, resolved, name)
        payload = f"{name}Payload"
        about = f"A {name} as written (as it was, for a delete)."
        shown = GqlFieldIR(payload_field(name), f"{name}!", "")
        found.types[payload] = GqlTypeIR("type", payload, about, fields=(shown,))
        for operation in ("create", "update", "delete"):
            if operation not in writes:
                continue
            given = f"{operation.capitalize()}{name}Input"
            inputs = _inputs(found, resolved, entity, operation)
            found.types[given] = GqlTypeIR(
                "input", given, f"A {operation} of a {name}.", fields=inputs
            )
            text = f"{VERBS[operation]} a {name} with what it keeps, in one transaction."
            fields.append(GqlFieldIR(f"{operation}{name}", f"{payload}!", text, f"input: {given}!"))
    return sorted(fields, key=lambda f: f.name)


def payload_field(entity: str) -> str:
    """The payload's field of the entity written: OrgNode -> orgNode."""
    return entity[:1].lower() + entity[1:]


def _inputs(
    found: Collected, resolved: Resolved, entity: Entity, operation: str
) -> tuple[GqlFieldIR, ...]:
    """Create takes every attribute but the version and those it sets (generated, counted),
    one with a default left out as it may be; update and delete the key, and the version
    read; update, the attributes it may change, each left as it is when absent."""
    counters = counters_of(resolved, entity)
    attrs = {n: a for n, a in entity.attrs.items() if n != VERSION and n not in counters}
    if operation == "create":
        given = [a for a in attrs.values() if not a.spec.generated]
        return tuple(
            _input_field(found, resolved, a, required=a.spec.default is None) for a in given
        )
    fields = [_input_field(found, resolved, attrs[p], True) for p in _key_parts(resolved, entity)]
    if VERSION in entity.attrs:
        needed = "!" if operation == "update" else ""
        about = "The version read" + ("." if needed else ", if it is to be checked.")
        fields.append(GqlFieldIR("expectedVersion", f"Int{needed}", about))
    if operation == "update":
        kept = fixed(resolved, entity)
        fields += [
            _input_field(found, resolved, a, False) for n, a in attrs.items() if n not in kept
        ]
    return tuple(fields)


def _input_field(found: Collected, resolved: Resolved, attr: Attr, required: bool) -> GqlFieldIR:
    """An attribute as an input field: a struct as its input type; nullable unless the
    value is `required` and the attribute is not optional."""
    kind = attribute_type(attr)
    spec = attr.spec
    struct = spec.of if spec.type in ("struct", "list") else None
    if struct is not None and struct in resolved.struct_attrs:
        kind = re.sub(rf"\b{struct}\b", f"{struct}Input", kind)
        _struct_input(found, resolved, struct)
    if not required:
        kind = kind.removesuffix("!")
    return GqlFieldIR(field_name(attr.name), kind, spec.description)


def _struct_input(found: Collected, resolved: Resolved, struct: str) -> None:
    name = f"{struct}Input"
    if name in found.types:
        return
    found.types[name] = GqlTypeIR("input", name, f"A {struct}.")  # placed before its fields
    inner = resolved.struct_attrs[struct].values()
    fields = tuple(_input_field(found, resolved, a, required=True) for a in inner)
    found.types[name] = GqlTypeIR(
        "input", name, resolved.spec.structs[struct].description or f"A {struct}.", fields=fields
    )


def write_bindings(resolved: Resolved) -> tuple[tuple[WriteBindingIR, ...], list[str]]:
    """Each entity's writes as api.py binds them, and the imports they need."""
    checked, _ = collect(resolved)
    found, imports = [], set()
    for entity in resolved.entities.values():
        if not entity.spec.writes:
            continue
        name = entity.name
        module = snake(name)
        imports |= {
            f"from .models.{module} import {name}",
            f"from .keys import {module} as _keys_{module}",
        }
        allow = []
        for operation in entity.spec.writes:
            rule = None if checked is None else checked.entities[(name, operation)]
            if rule is not None:
                owners = ", ".join(f"{o}=m.{o}" for o in rules.owners(rule))
                call = f"_authz.may_{operation}_{module}(caller{', ' if owners else ''}{owners})"
                allow.append((operation, f"lambda caller, m: {call}"))
        derived = []
        for d in derived_of(resolved, entity):
            target = snake(d.entity)
            imports.add(f"from .models.{target} import {d.entity}")
            derived.append((d.name, d.entity, d.fields, d.unique, d.fold))
        counts = []
        for c in counts_of(resolved, entity):
            parent = snake(c.parent)
            imports.add(f"from .keys import {parent} as _keys_{parent}")
            counts.append((c.parent, f"_keys_{parent}.key", c.bound, c.attribute, c.most))
        parents = []
        for r in parents_of(resolved, entity):
            parent = snake(r.entity)
            imports.add(f"from .keys import {parent} as _keys_{parent}")
            parents.append((r.entity, f"_keys_{parent}.key", r.bound))
        owned = []
        for o in owned_of(resolved, entity):
            plan = f"plan_{o.pattern}"
            imports.add(
                f"from .queries.{module_of(resolved.spec.patterns[o.pattern])} import {plan}"
            )
            removals = tuple((r.type, r.by, r.parts) for r in o.removals)
            owned.append((o.name, plan, o.bound, removals))
        parts = tuple(_key_parts(resolved, entity))
        found.append(
            WriteBindingIR(
                name,
                f"_keys_{module}.key",
                parts,
                tuple(entity.spec.writes),
                entity.tenant_scoped,
                VERSION in entity.attrs,
                tuple(allow),
                tuple(derived),
                tuple(counts),
                tuple(counters_of(resolved, entity)),
                tuple(generated_of(entity)),
                tuple(parents),
                expiry_of(entity),
                tuple(owned),
                entity.spec.mutations is not False,
            )
        )
    if found:
        used = ["Count"] if any(w.counts for w in found) else []
        used += ["Derived"] if any(w.derived for w in found) else []
        used += ["Parent"] if any(w.parents for w in found) else []
        used += ["Owned", "Removal"] if any(w.owned for w in found) else []
        imports.add(f"from keygraph.writes import {', '.join([*used, 'Writes'])}")
        imports.add("from .table import TABLE")
        if any(w.allow for w in found):
            imports.add("from . import authz as _authz")
    return tuple(found), sorted(imports)


def _key_parts(resolved: Resolved, entity: Entity) -> list[str]:
    return [p.name for p in key_params(resolved, entity.name)]

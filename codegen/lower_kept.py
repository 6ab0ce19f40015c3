"""Lowering of `first_page` relations: beside a query's function, one making its first page
from the values a parent keeps of its items (a user's group_ids for its memberships), each
value with the parent's arguments making one item's key and attributes; no read."""

from __future__ import annotations

from dataclasses import replace

from .imports import sort_imports
from .ir import KeptIR, QueriesModuleIR
from .lower_queries import module_of
from .pattern_params import key_params, pattern_params
from .pytypes import snake
from .resolve import Resolved
from .spec import RelationSpec


def kept_function(pattern: str) -> str:
    """The function making a query's first page from the values a parent keeps."""
    return f"{pattern}_first_page"


def with_first_pages(resolved: Resolved, modules: list[QueriesModuleIR]) -> list[QueriesModuleIR]:
    """The queries modules, each with the first pages of its queries that relations keep."""
    kept: dict[str, list[KeptIR]] = {}
    imports: dict[str, set[str]] = {}
    by_name = {m.module: m for m in modules}
    for entity in resolved.entities.values():
        for spec in entity.spec.relations.values():
            if spec.first_page is None:
                continue
            module = module_of(resolved.spec.patterns[spec.pattern])
            made, needs = _kept(by_name[module], spec, resolved)
            kept.setdefault(module, []).append(made)
            imports.setdefault(module, set()).update(needs)
    return [
        replace(
            m,
            imports=tuple(sort_imports({*m.imports, *imports[m.module]} - {""})),
            kept=tuple(kept[m.module]),
        )
        if m.module in kept
        else m
        for m in modules
    ]


def _kept(
    module: QueriesModuleIR, relation: RelationSpec, resolved: Resolved
) -> tuple[KeptIR, set[str]]:
    """The first page of the relation's query (checked: relation_checks.py)."""
    query = next(q for q in module.queries if q.name == relation.pattern)
    (returned,) = resolved.spec.patterns[relation.pattern].returns
    entity = resolved.entities[returned]
    (held,) = entity.spec.relations[str(relation.via)].args.values()
    params = {p.name: p.param for p in pattern_params(resolved, relation.pattern)}
    given = {name: params[name] for name in relation.args} | {held: "value"}
    parts = ["tenant"] if entity.tenant_scoped else []
    parts += [given[var.name] for var in key_params(resolved, returned)]
    keys = snake(returned)
    made = KeptIR(
        kept_function(relation.pattern),
        query,
        f"{held}s",
        f"_keys_{keys}.key({', '.join(parts)})",
        tuple(given.items()),
        returned,
    )
    return made, {
        "from collections.abc import Sequence",
        f"from ..keys import {keys} as _keys_{keys}",
    }

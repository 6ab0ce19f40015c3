"""The key arguments of a pattern, as its generated function and its GraphQL field take them:
a get's and a batch get's are the values its entity's primary key is built from, a query's
those of its partition and sort condition (never the tenant, nor a query's shard)."""

from __future__ import annotations

from . import keytemplate
from .lower_keys import params_of
from .lower_queries import pattern_lookup, sort_templates
from .pytypes import KeyVar
from .resolve import Resolved


def key_params(resolved: Resolved, entity_name: str) -> list[KeyVar]:
    """The values an entity's primary key is built from, the tenant aside."""
    entity = resolved.entities[entity_name]
    table = resolved.spec.table
    templates = [entity.keys[table.partition_key], entity.keys[table.sort_key]]
    return [p for p in params_of(templates, entity.var) if p.name != "tenant"]


def query_params(resolved: Resolved, name: str) -> list[KeyVar]:
    """A query pattern's key arguments: its partition's and sort condition's values."""
    pattern = resolved.spec.patterns[name]
    shard = pattern.shards.placeholder if pattern.shards else ""
    partition = keytemplate.parse(str(pattern.partition))
    _, sort = sort_templates(pattern.sort)
    lookup = pattern_lookup(pattern, resolved)
    return [p for p in params_of([partition, *sort], lookup) if p.name not in ("tenant", shard)]


def pattern_params(resolved: Resolved, name: str) -> list[KeyVar]:
    """Any pattern's key arguments, in the order its function takes them."""
    pattern = resolved.spec.patterns[name]
    if pattern.operation == "query":
        return query_params(resolved, name)
    return key_params(resolved, str(pattern.entity))

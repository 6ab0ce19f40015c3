"""Lowering of a checked spec to the IR templates render."""

from __future__ import annotations

from .ir import IndexIR, ProgramIR
from .lower_keys import lower_keys
from .lower_models import lower_entity, lower_enums, lower_struct
from .lower_queries import lower_queries
from .resolve import Resolved
from .worksheet import entity_keys, worksheet


def lower(resolved: Resolved) -> ProgramIR:
    spec = resolved.spec
    table = spec.table
    return ProgramIR(
        source=resolved.source,
        table_name=table.name,
        partition_key=table.partition_key,
        sort_key=table.sort_key,
        ttl_attribute=repr(table.ttl_attribute),
        indexes=tuple(
            IndexIR(
                name=name,
                partition_key=index.partition_key,
                sort_key=repr(index.sort_key),
                projection=index.projection,
                include=repr(tuple(index.include)),
            )
            for name, index in table.indexes.items()
        ),
        enums=tuple(lower_enums(resolved)),
        structs=tuple(
            lower_struct(name, struct.description, resolved.struct_attrs[name])
            for name, struct in sorted(spec.structs.items())
        ),
        models=tuple(lower_entity(e, resolved) for _, e in sorted(resolved.entities.items())),
        keys=tuple(lower_keys(e, resolved) for _, e in sorted(resolved.entities.items())),
        queries=tuple(lower_queries(resolved)),
        worksheet=tuple(worksheet(resolved)),
        entity_keys=tuple(entity_keys(resolved)),
    )

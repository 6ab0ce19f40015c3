"""Lowering of a checked spec to the IR templates render."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel

from . import iam
from .authz import collect
from .ir import AuthorizationIR, EntityRowIR, IndexIR, ProgramIR
from .lower_api import lower_api
from .lower_authz import lower_authorization
from .lower_bindings import lower_bindings
from .lower_kept import with_first_pages
from .lower_keys import lower_keys
from .lower_models import lower_entity, lower_enums, lower_struct, lower_summaries
from .lower_queries import lower_queries
from .resolve import Resolved
from .spec import EntitySpec
from .worksheet import entity_keys, worksheet


def lower(resolved: Resolved) -> ProgramIR:
    spec = resolved.spec
    table = spec.table
    api = lower_api(resolved)
    return ProgramIR(
        source=resolved.source,
        table_name=table.name,
        partition_key=table.partition_key,
        sort_key=table.sort_key,
        ttl_attribute=repr(table.ttl_attribute),
        point_in_time_recovery=table.point_in_time_recovery,
        stream=repr(table.stream),
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
        summaries=tuple(lower_summaries(resolved)),
        keys=tuple(lower_keys(e, resolved) for _, e in sorted(resolved.entities.items())),
        queries=tuple(with_first_pages(resolved, lower_queries(resolved))),
        worksheet=tuple(worksheet(resolved)),
        entity_keys=tuple(entity_keys(resolved)),
        entity_rows=tuple(
            EntityRowIR(e.spec.type, e.name, e.module, "version" in e.attrs, e.tenant_scoped)
            for _, e in sorted(resolved.entities.items())
        ),
        fingerprint=fingerprint(resolved),
        tenant_prefixes=repr(tenant_prefixes(resolved)),
        api=api,
        bindings=lower_bindings(resolved, api),
        authorization=_authorization(resolved),
        policy=tuple(iam.statements(resolved)),
    )


def _authorization(resolved: Resolved) -> AuthorizationIR | None:
    checked, problems = collect(resolved)
    assert not problems, problems  # analyse() reported them
    return None if checked is None else lower_authorization(resolved, checked)


def tenant_prefixes(resolved: Resolved) -> tuple[str, ...]:
    """The literal text before {tenant} in each partition key of the table: a tenant's items
    are those whose partition key starts with one of them and the escaped tenant."""
    found: set[str] = set()
    for entity in resolved.entities.values():
        template = entity.keys.get(resolved.spec.table.partition_key)
        if template is None or "tenant" not in template.placeholders:
            continue
        head = []
        for segment in template.segments:
            if segment.placeholder == "tenant":
                break
            head.append(segment.text + "#")
        found.add("".join(head))
    return tuple(sorted(found))


def _dump(model: BaseModel, exclude: Any = frozenset()) -> Any:
    """A spec part as JSON, settings left at their defaults left out (a new setting does not
    change the fingerprint of a spec that does not use it), nor those in `exclude`."""
    return model.model_dump(mode="json", exclude_defaults=True, exclude=exclude)


NOT_STORED = frozenset(
    {
        "access",
        "relations",
        "writes",
        "mutations",
        "unique",
        "copies",
        "counts",
        "requires",
        "owns",
        "expires_after",
    }
)
"""What an entity declares that does not change how its items are stored (nor do an
attribute's `generated`, who sets a value, and `id_separator`, how its global id reads)."""
_NOT_STORED_ATTRIBUTE = frozenset({"generated", "id_separator"})


def _not_stored(entity: EntitySpec) -> dict[str, Any]:
    made = {
        name: _NOT_STORED_ATTRIBUTE
        for name, a in entity.attributes.items()
        if a.generated or a.id_separator is not None
    }
    return dict.fromkeys(NOT_STORED, True) | ({"attributes": made} if made else {})


def fingerprint(resolved: Resolved) -> str:
    """A digest of how the spec stores items (the table and every entity): a migration's
    checkpoint belongs to one. Access rules, relations and writes (what they keep is other
    entities' items, stored as those entities say) are left out."""
    spec = resolved.spec
    stored = {
        "table": _dump(spec.table),
        "structs": {n: _dump(s) for n, s in spec.structs.items()},
        "entities": {n: _dump(e, _not_stored(e)) for n, e in spec.entities.items()},
    }
    text = json.dumps(stored, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]

"""Summary models: what a query on an INCLUDE or KEYS_ONLY index can read of an entity. The
index holds the table's keys, its own keys and the included attributes; the summary has the
entity's attributes among those (the ones inside keys parsed back out of them)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .pytypes import snake
from .resolve import TABLE_INDEX, Entity, Resolved


@dataclass(frozen=True, slots=True)
class Summary:
    entity: Entity
    index: str
    from_keys: dict[str, str]
    """Attribute -> the key builder whose parts hold it ("key", "by_status_key")."""
    included: tuple[str, ...]
    """Attributes stored in the index as they are."""
    typed: bool
    """Whether the index holds the `_type` discriminator."""

    @property
    def class_name(self) -> str:
        """UserByNameSummary (index BY_NAME), OrderByStatusSummary (ByStatus)."""
        parts = re.split(r"[^A-Za-z0-9]+", self.index)
        words = (p.capitalize() if p.isupper() else p[:1].upper() + p[1:] for p in parts if p)
        return f"{self.entity.name}{''.join(words)}Summary"

    @property
    def module(self) -> str:
        return snake(self.class_name)


def summary_of(resolved: Resolved, entity: Entity, index: str) -> Summary | None:
    """The summary of `entity` on `index`; None when the index holds every attribute (the
    entity's own model serves)."""
    gsi = resolved.spec.table.indexes.get(index)
    if gsi is None or gsi.projection == "ALL":
        return None
    if set(entity.attrs) <= set(gsi.include) and "_type" in gsi.include:
        return None
    from_keys: dict[str, str] = {}
    for owner in (TABLE_INDEX, index):
        keys = resolved.index_keys(owner)
        assert keys is not None
        builder = "key" if owner == TABLE_INDEX else f"{snake(owner)}_key"
        for attr in keys:
            template = entity.keys.get(attr) if attr else None
            for name in template.placeholders if template else ():
                if name in entity.attrs:
                    from_keys.setdefault(name, builder)
    included = tuple(n for n in entity.attrs if n in gsi.include and n not in from_keys)
    return Summary(entity, index, from_keys, included, "_type" in gsi.include)

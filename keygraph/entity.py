"""What a table migration needs to know of an entity: how the spec of a generated package
stores its items. Generated packages list theirs in `entities.ENTITIES`, by type
discriminator."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .plan import Item


@dataclass(frozen=True, slots=True)
class EntityDef:
    """An entity: its model, the parser of its primary key (which holds the tenant of a
    tenant-scoped entity), and whether its items carry a `version`."""

    model: type[Any]
    parse_key: Callable[[Mapping[str, str]], Any]
    versioned: bool
    tenant_scoped: bool = True

    @property
    def name(self) -> str:
        return str(self.model.__name__)

    def rebuild(self, item: Mapping[str, Any]) -> Item:
        """The item as this spec stores it: read into the model, written back out with every
        key this spec computes. Raises what reading or keying it raises."""
        model = self.model.from_item(item)
        if self.tenant_scoped:
            rebuilt: Item = model.to_item(self.parse_key(item).tenant)
        else:
            rebuilt = model.to_item()
        return rebuilt

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

    def read(self, item: Mapping[str, Any]) -> Any:
        """The model of a stored item; raises what the model refuses."""
        return self.model.from_item(item)

    def tenant_of(self, item: Mapping[str, Any]) -> str | None:
        """The tenant in a stored item's primary key (None for an entity without tenants);
        BadArgument for a key this spec does not build."""
        return str(self.parse_key(item).tenant) if self.tenant_scoped else None

    def store(self, model: Any, tenant: str | None) -> Item:
        """The item this spec stores for a model: its attributes and every key."""
        stored: Item = model.to_item() if tenant is None else model.to_item(tenant)
        return stored

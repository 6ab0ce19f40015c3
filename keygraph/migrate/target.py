"""What a migration migrates to: a generated package's table definition and entities."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass

from keygraph.entity import EntityDef
from keygraph.plan import TableDef

MIGRATION_PARTITION = "KEYGRAPH#MIGRATION"
"""Where checkpoints live; every partition key starting KEYGRAPH# is keygraph's own."""
OWN_PREFIX = "KEYGRAPH#"


@dataclass(frozen=True, slots=True)
class Target:
    table: TableDef
    entities: Mapping[str, EntityDef]
    """By type discriminator."""
    fingerprint: str
    tenant_prefixes: tuple[str, ...]
    """The literal text before {tenant} in tenant-scoped partition keys ("T#")."""

    @property
    def index_keys(self) -> tuple[str, ...]:
        """Every key attribute of every index (sparse items may lack them)."""
        names: list[str] = []
        for index in self.table.indexes:
            names += [index.partition_key, *([index.sort_key] if index.sort_key else [])]
        return tuple(dict.fromkeys(names))


def load_target(package: str, table_name: str | None = None) -> Target:
    """The target of a generated package by import name (e.g. "generated"), for the table
    `table_name` when its name is not the spec's."""
    table = importlib.import_module(f"{package}.table").TABLE
    entities = importlib.import_module(f"{package}.entities")
    if table_name is not None and table_name != table.name:
        from dataclasses import replace

        table = replace(table, name=table_name)
    return Target(table, entities.ENTITIES, entities.FINGERPRINT, entities.TENANT_PREFIXES)

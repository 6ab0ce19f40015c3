"""Which access pattern of the spec a store call serves, from its plan alone: a metric's
and a span's `pattern`, a bounded set of names (the spec's patterns, the entities written,
and a few fixed ones) whatever the keys hold.

A read is matched against the patterns' key templates (a get's or batch get's against its
entity's primary key, a query's against its index, partition and sort condition); a write
is named by the entity whose primary key it addresses. Anything else is `other`. Both
servers name their store calls' metrics so: `keygraph serve` with the spec it compiled, the
repository's server with its generated package's.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keygraph.plan import BatchGet, Check, Delete, Get, Put, Query, Scan, Update, WriteAction

OTHER = "other"
TRANSACTION = "transaction"
BATCH_WRITE = "batch_write"
SCAN = "scan"


def _regex(template: str, paths: frozenset[str], *, prefix: bool = False) -> re.Pattern[str]:
    """A template's keys: a placeholder holds one escaped segment (no "#"), a path several."""
    parts = []
    for segment in template.split("#"):
        name = segment[1:-1] if segment.startswith("{") and segment.endswith("}") else None
        if name is None:
            parts.append(re.escape(segment))
        else:
            parts.append(".+" if name in paths else "[^#]*")
    return re.compile("#".join(parts) + (".*" if prefix else ""), re.DOTALL)


@dataclass(frozen=True, slots=True)
class _EntityKey:
    name: str
    pk: re.Pattern[str]
    sk: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class _QueryPattern:
    name: str
    index: str | None
    partition: re.Pattern[str]
    sort_op: str | None
    sort: tuple[re.Pattern[str], ...]
    fixed: int = 0
    """How many of its partition's characters are literal: the more, the more specific."""


class Patterns:
    """Names the pattern of a plan; built once from the spec."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        table = spec.get("table", {})
        self._pk = str(table.get("partition_key", "PK"))
        self._sk = str(table.get("sort_key", "SK"))
        self._entities: list[_EntityKey] = []
        paths_of: dict[str, frozenset[str]] = {}
        for name, entity in spec.get("entities", {}).items():
            attributes = entity.get("attributes", {})
            paths = frozenset(a for a, d in attributes.items() if d.get("type") == "path")
            paths_of[name] = paths
            keys = entity.get("keys", {})
            if self._pk in keys and self._sk in keys:
                pk, sk = _regex(keys[self._pk], paths), _regex(keys[self._sk], paths)
                self._entities.append(_EntityKey(name, pk, sk))
        self._reads: dict[tuple[str, str], str] = {}
        self._queries: list[_QueryPattern] = []
        all_paths = frozenset().union(*paths_of.values()) if paths_of else frozenset()
        for name, pattern in spec.get("patterns", {}).items():
            operation = pattern.get("operation")
            if operation in ("get", "batch_get"):
                self._reads.setdefault((operation, str(pattern.get("entity"))), name)
            elif operation == "query":
                self._queries.append(self._query(name, pattern, all_paths))
        # a pattern fixing a value (the org roots) before the one taking it as an argument
        self._queries.sort(key=lambda query: -query.fixed)

    @staticmethod
    def _query(name: str, pattern: Mapping[str, Any], paths: frozenset[str]) -> _QueryPattern:
        index = pattern.get("index")
        sort = pattern.get("sort") or {}
        op, value = next(iter(sort.items())) if sort else (None, None)
        templates: Sequence[str] = (
            value if isinstance(value, list) else [] if value is None else [value]
        )
        regexes = tuple(_regex(t, paths, prefix=op == "begins_with") for t in templates)
        if op == "collection":
            op = "between"  # a collection is read as the range from its head (keycodec)
            regexes = regexes[:1]
        partition = str(pattern.get("partition"))
        fixed = sum(len(s) for s in partition.split("#") if not s.startswith("{"))
        return _QueryPattern(
            name,
            None if index in (None, "table") else str(index),
            _regex(partition, paths),
            op,
            regexes,
            fixed,
        )

    @classmethod
    def load(cls, path: Path) -> Patterns:
        """From the spec file; with none there (an installed server), every call is `other`."""
        try:
            spec = tomllib.loads(path.read_text())
        except FileNotFoundError:
            spec = {}
        return cls(spec)

    def _entity(self, key: Mapping[str, str]) -> str | None:
        pk, sk = key.get(self._pk), key.get(self._sk)
        if pk is None or sk is None:
            return None
        for entity in self._entities:
            if entity.pk.fullmatch(pk) and entity.sk.fullmatch(sk):
                return entity.name
        return None

    def _read(self, operation: str, key: Mapping[str, str]) -> str:
        entity = self._entity(key)
        return OTHER if entity is None else self._reads.get((operation, entity), OTHER)

    def _write(self, action: WriteAction) -> str:
        key = action.item if isinstance(action, Put) else action.key
        return self._entity(key) or OTHER

    def of_query(self, plan: Query) -> str:
        for pattern in self._queries:
            if pattern.index != plan.index or not pattern.partition.fullmatch(plan.partition):
                continue
            sort = plan.sort
            if pattern.sort_op is None:
                if sort is None:
                    return pattern.name
                continue
            if sort is None or sort.op != pattern.sort_op:
                continue
            values = (sort.value,) if sort.high is None else (sort.value, sort.high)
            if all(r.fullmatch(v) for r, v in zip(pattern.sort, values, strict=False)):
                return pattern.name
        return OTHER

    def of(self, plan: object) -> str:
        """The pattern of a call's plan (a transaction's or batch write's actions: their
        kind alone, as they mix entities)."""
        if isinstance(plan, Get):
            return self._read("get", plan.key)
        if isinstance(plan, BatchGet):
            return self._read("batch_get", plan.keys[0]) if plan.keys else OTHER
        if isinstance(plan, Query):
            return self.of_query(plan)
        if isinstance(plan, Put | Update | Delete | Check):
            return self._write(plan)
        if isinstance(plan, Scan):
            return SCAN
        return OTHER

    def of_call(self, kind: str, plan: object) -> str:
        """The pattern of a store call of DynamoDB operation `kind`: a batch write's or a
        transaction's is its kind, as its actions mix entities."""
        if isinstance(plan, Sequence):
            return BATCH_WRITE if kind == "BatchWriteItem" else TRANSACTION
        return self.of(plan)

"""A small in-memory Store for codegen tests: the read side of DynamoDB's semantics (key
equality, sort conditions, direction, limit, exclusive start keys, sparse indexes)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from keygraph.errors import ValidationError
from keygraph.plan import (
    BatchGet,
    Delete,
    Get,
    Item,
    Key,
    Put,
    Query,
    QueryResult,
    SortCondition,
    TableDef,
    Update,
    WriteAction,
)


def _matches(value: str, cond: SortCondition | None) -> bool:
    if cond is None:
        return True
    if cond.op == "begins_with":
        return value.startswith(cond.value)
    if cond.op == "between":
        return cond.value <= value <= str(cond.high)
    compare = {
        "eq": value == cond.value,
        "lt": value < cond.value,
        "le": value <= cond.value,
        "gt": value > cond.value,
        "ge": value >= cond.value,
    }
    return compare[cond.op]


def _no_floats(value: Any) -> None:
    if isinstance(value, float):
        raise ValidationError("floats are not supported; use Decimal")
    if isinstance(value, dict):
        for inner in value.values():
            _no_floats(inner)
    if isinstance(value, list):
        for inner in value:
            _no_floats(inner)


class MemoryStore:
    """Items by (PK, SK). `page_cap` makes every query stop early after that many items, as
    DynamoDB does at 1 MB, to exercise continuation."""

    def __init__(self, table: TableDef, page_cap: int | None = None) -> None:
        self.table = table
        self.page_cap = page_cap
        self.items: dict[tuple[str, str], Item] = {}
        self.queries: list[Query] = []

    def _id(self, key: Key) -> tuple[str, str]:
        return key[self.table.partition_key], key[self.table.sort_key]

    async def get(self, plan: Get) -> Item | None:
        item = self.items.get(self._id(plan.key))
        return copy.deepcopy(item)

    async def batch_get(self, plan: BatchGet) -> list[Item]:
        if len(plan.keys) > 100:
            raise ValidationError("more than 100 keys")
        found = (self.items.get(self._id(key)) for key in plan.keys)
        return [copy.deepcopy(item) for item in found if item is not None]

    async def query(self, plan: Query) -> QueryResult:
        self.queries.append(plan)
        pk, sk = self.table.partition_key, self.table.sort_key
        if plan.index is None:
            index_pk, index_sk = pk, sk
        else:
            index = self.table.index(plan.index)
            index_pk, index_sk = index.partition_key, index.sort_key or sk

        def position(item: Key) -> tuple[str, str, str]:
            return item[index_sk], item[pk], item[sk]

        rows = sorted(
            (
                item
                for item in self.items.values()
                if item.get(index_pk) == plan.partition
                and index_sk in item
                and _matches(item[index_sk], plan.sort)
            ),
            key=position,
            reverse=not plan.forward,
        )
        if plan.start is not None:
            start = position(plan.start)
            rows = [
                r for r in rows if (position(r) > start) == plan.forward and position(r) != start
            ]
        limit = min(x for x in (plan.limit, self.page_cap, len(rows)) if x is not None)
        page = rows[:limit]
        more = len(rows) > limit
        last = None
        if more and page:
            keys = {pk, sk, index_pk, index_sk}
            last = {name: page[-1][name] for name in keys}
        return QueryResult([copy.deepcopy(item) for item in page], last)

    def add(self, item: Item) -> None:
        """Store an item as put would (floats refused)."""
        _no_floats(item)
        self.items[self._id(item)] = copy.deepcopy(item)

    async def put(self, plan: Put) -> None:
        self.add(plan.item)

    async def update(self, plan: Update) -> Item:
        """Writes beyond put and delete are not what codegen tests exercise."""
        raise NotImplementedError

    async def delete(self, plan: Delete) -> None:
        self.items.pop(self._id(plan.key), None)

    async def batch_write(self, actions: Sequence[Put | Delete]) -> None:
        for action in actions:
            await (self.put(action) if isinstance(action, Put) else self.delete(action))

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        return None

"""One request's store that remembers the items it read (by a get, a batch get, or a Query
of the table or of an index projecting every attribute) and answers a later get or batch get
of one of them from what it read, without a store call: a node's parent the request read as
a page's item, or a user its look-ahead Query read with its addresses. Only what the request
read is answered; every generated function asks its pattern's guard before it calls the
store, so an item remembered answers only a read the same rules allow. A consistent get
reads the table, and any write forgets everything remembered."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from keygraph.plan import BatchGet, Floats, Get, Item, Key, Query, QueryResult, TableDef
from keygraph.store import Store, query_each
from keygraph.stores.view import Forwarding, Planned

R = TypeVar("R")
Place = tuple[Floats, str, str]
"""An item's place in memory: the numbers read as floats, its partition and sort keys."""


class Remembering(Forwarding):
    """Forwards every call to `inner` (the request's store, counting its calls), answering
    a get or batch get of items read before in the request from them."""

    def __init__(self, inner: Store, table: TableDef) -> None:
        super().__init__(inner)
        self._keys = table.partition_key, table.sort_key
        self._whole = {None} | {i.name for i in table.indexes if i.projection == "ALL"}
        """The indexes (None: the table) whose Query answers whole items."""
        self._items: dict[Place, Item] = {}
        self._writes = 0
        """Writes begun or ended so far: a read that saw one on its way is not kept."""
        self._writing = 0

    def __getattr__(self, name: str) -> Any:
        """What the inner store offers beyond the Store protocol (a counting store's
        `one_wave`, which the domain's reads use)."""
        if name == "inner":  # not set yet
            raise AttributeError(name)
        return getattr(self.inner, name)

    def forget(self) -> None:
        """Drops what was remembered: a part of an answer read in parts, once sent."""
        self._items.clear()

    def _place(self, floats: Floats, key: Key | Item) -> Place | None:
        pk, sk = self._keys
        partition, sort = key.get(pk), key.get(sk)
        if not isinstance(partition, str) or not isinstance(sort, str):
            return None
        return floats, partition, sort

    def _keep(self, floats: Floats, items: Sequence[Item], writes: int) -> None:
        """Remembers the items of a read begun after `writes` writes, unless a write began
        or ended since."""
        if self._writing or writes != self._writes:
            return
        for item in items:
            place = self._place(floats, item)
            if place is not None:
                self._items[place] = dict(item)

    async def get(self, plan: Get) -> Item | None:
        place = self._place(plan.floats, plan.key)
        if not plan.consistent and place in self._items:
            return dict(self._items[place])
        writes = self._writes
        item = await super().get(plan)
        if item is not None:
            self._keep(plan.floats, [item], writes)
        return item

    async def batch_get(self, plan: BatchGet) -> list[Item]:
        places = [self._place(plan.floats, key) for key in plan.keys]
        known = [self._items[p] for p in places if p is not None and p in self._items]
        wanted = tuple(
            key
            for key, p in zip(plan.keys, places, strict=True)
            if p is None or p not in self._items
        )
        if not wanted:
            return [dict(item) for item in known]
        writes = self._writes
        found = await super().batch_get(BatchGet(wanted, plan.floats))
        self._keep(plan.floats, found, writes)
        return [dict(item) for item in known] + found

    async def query(self, plan: Query) -> QueryResult:
        writes = self._writes
        result = await super().query(plan)
        if plan.index in self._whole:
            self._keep(plan.floats, result.items, writes)
        return result

    async def query_many(self, plans: Sequence[Query]) -> list[QueryResult]:
        """Each plan's Query, as the inner store reads them together (query_each), its
        items remembered as a Query's are."""
        writes = self._writes
        results = await query_each(self.inner, plans)
        for plan, result in zip(plans, results, strict=True):
            if plan.index in self._whole:
                self._keep(plan.floats, result.items, writes)
        return results

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        if kind in _READS:
            return await call()
        self._items.clear()
        self._writes += 1
        self._writing += 1
        try:
            return await call()
        finally:
            self._writing -= 1
            self._writes += 1


_READS = frozenset(("GetItem", "BatchGetItem", "Query", "Scan"))
"""The calls that write nothing; any other forgets what the request read."""

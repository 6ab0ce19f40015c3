"""A store wrapper for generated-code tests: it notes every query plan and can end every
page early (`page_cap` items), as DynamoDB does at 1 MB, to exercise continuation."""

from __future__ import annotations

from dataclasses import replace

from keygraph.plan import Item, Put, Query, QueryResult
from keygraph.store import Store
from keygraph.stores.view import StoreView


class Recording(StoreView):
    def __init__(self, inner: Store, page_cap: int | None = None) -> None:
        super().__init__(inner)
        self.page_cap = page_cap
        self.queries: list[Query] = []

    async def query(self, plan: Query) -> QueryResult:
        self.queries.append(plan)
        if self.page_cap is not None:
            plan = replace(plan, limit=min(plan.limit or self.page_cap, self.page_cap))
        return await self.inner.query(plan)

    async def add(self, item: Item) -> None:
        await self.inner.put(Put(item))

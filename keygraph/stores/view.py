"""A Store that forwards every call to another through one hook, `_call`, which is given
the call's DynamoDB operation and its plan: the base of the wrappers that count a request's
calls (counting.py) or observe them for the whole process
(keygraph/serve/observed_store.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from keygraph.plan import (
    BatchGet,
    Delete,
    Get,
    Item,
    Put,
    Query,
    QueryResult,
    Scan,
    Update,
    WriteAction,
)
from keygraph.store import Store, query_each

R = TypeVar("R")
Planned = Get | BatchGet | Query | Scan | Put | Update | Delete | Sequence[WriteAction]
"""What a call is given: its plan, or a batch write's or transaction's actions."""


async def _answered() -> None:
    """A call already answered: one of a batch whose first call read them all."""


class Forwarding:
    """Forwards every call to `inner` through `_call`. Closing it leaves `inner` open:
    whoever opened the store closes it."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.answers_inline: bool = getattr(inner, "answers_inline", False)
        """Whether the inner store answers without waiting (the embedded store): a batch of
        its calls gains nothing from running concurrently."""

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        """Makes one call of the inner store; `kind` names its DynamoDB operation."""
        return await call()

    async def get(self, plan: Get) -> Item | None:
        return await self._call("GetItem", plan, lambda: self.inner.get(plan))

    async def batch_get(self, plan: BatchGet) -> list[Item]:
        return await self._call("BatchGetItem", plan, lambda: self.inner.batch_get(plan))

    async def query(self, plan: Query) -> QueryResult:
        return await self._call("Query", plan, lambda: self.inner.query(plan))

    async def query_many(self, plans: Sequence[Query]) -> list[QueryResult]:
        """Each plan's Query, each one call through `_call`. On a store that answers inline
        the inner store reads them together (query_each) in the first call, which takes
        their time; elsewhere they are sent together, one Query a plan."""
        if not self.answers_inline or not plans:
            return list(await asyncio.gather(*(self.query(plan) for plan in plans)))
        found = await self._call("Query", plans[0], lambda: query_each(self.inner, plans))
        for plan in plans[1:]:
            await self._call("Query", plan, _answered)
        return found

    async def scan(self, plan: Scan) -> QueryResult:
        return await self._call("Scan", plan, lambda: self.inner.scan(plan))

    async def put(self, plan: Put) -> None:
        await self._call("PutItem", plan, lambda: self.inner.put(plan))

    async def update(self, plan: Update) -> Item:
        return await self._call("UpdateItem", plan, lambda: self.inner.update(plan))

    async def delete(self, plan: Delete) -> None:
        await self._call("DeleteItem", plan, lambda: self.inner.delete(plan))

    async def batch_write(self, actions: Sequence[Put | Delete]) -> None:
        await self._call("BatchWriteItem", actions, lambda: self.inner.batch_write(actions))

    async def transact_write(
        self, actions: Sequence[WriteAction], token: str | None = None
    ) -> None:
        await self._call(
            "TransactWriteItems", actions, lambda: self.inner.transact_write(actions, token)
        )

    async def close(self) -> None:
        """Leaves the inner store open."""


class StoreView(Forwarding):
    """A view of a store for one unit of work (a request): work that outlives it goes on
    under the view (server/domain/cleanup.py)."""

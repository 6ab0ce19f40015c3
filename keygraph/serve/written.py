"""A request's store that notes whether any of its writes may have been applied, for
Idempotency-Key (idempotency.py): a request that failed or was cut by its deadline after one
may have landed keeps its key's record, so that a retry does not apply it twice."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from keygraph.errors import StoreUnavailable
from keygraph.store import Store
from keygraph.stores.view import Planned, StoreView

R = TypeVar("R")
WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})


class Written(StoreView):
    """Forwards every call to `inner`; `maybe_applied` once a write answered, failed in a
    way that says it may have run (StoreUnavailable.applied not False), or was cut off on
    its way (cancelled). A refused write (a failed condition) applied nothing."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.maybe_applied = False

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        if kind not in WRITES:
            return await call()
        try:
            answer = await call()
        except StoreUnavailable as exc:
            if exc.applied is not False:
                self.maybe_applied = True
            raise
        except asyncio.CancelledError:  # its deadline, or the server stopping: it may be sent
            self.maybe_applied = True
            raise
        self.maybe_applied = True
        return answer

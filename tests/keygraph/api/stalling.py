"""A store that stalls: the calls a test picks wait on an asyncio.Event that never fires,
before they reach the store (nothing sent) or after (the write landed, its answer lost),
until they are cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from keygraph.store import Store
from keygraph.stores.view import Forwarding, Planned

R = TypeVar("R")
Picked = Callable[[str, Planned], bool]
"""Whether a call (its DynamoDB operation, its plan) stalls."""


def never(_kind: str, _plan: Planned) -> bool:
    return False


class Stalling(Forwarding):
    """Forwards every call to `inner`; those `before` picks stall before they are sent, those
    `after` picks once they were answered. `stalled` and `cancelled` count them."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.answers_inline = False  # each call its own, as a stalled one must be
        self.before: Picked = never
        self.after: Picked = never
        self.kinds: list[str] = []
        self.stalled = 0
        self.cancelled = 0
        self._never = asyncio.Event()

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        self.kinds.append(kind)
        if self.before(kind, plan):
            await self._stall()
        answer = await call()
        if self.after(kind, plan):
            await self._stall()
        return answer

    async def _stall(self) -> None:
        self.stalled += 1
        try:
            await self._never.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise

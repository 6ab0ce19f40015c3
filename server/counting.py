"""A Store wrapper that counts one request's store calls and its sequential waves.

A wave is a stretch of time during which at least one store call is in flight: calls sent
together (one level of a nested query) share a wave, and a call that has to wait for another's
answer starts a new one. Every call first yields to the event loop once, so calls started by
the same tick all register before any runs, even on a store that answers without awaiting.
Calls that a caller makes one after another inside `one_wave()` (none waiting for another's
answer) count as one wave too, and skip that yield.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from generated.runtime.plan import (
    BatchGet,
    Delete,
    Get,
    Item,
    Put,
    Query,
    QueryResult,
    Update,
    WriteAction,
)
from generated.runtime.store import Store

R = TypeVar("R")


class CountingStore:
    """Forwards every call to `inner`, counting calls and waves; one per request."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.answers_inline: bool = getattr(inner, "answers_inline", False)
        """Whether the inner store answers without waiting (the embedded store): a batch of
        its calls gains nothing from running concurrently."""
        self.calls = 0
        self.waves = 0
        self._in_flight = 0
        self._held = 0
        self._hold_from_idle = False

    @contextmanager
    def one_wave(self) -> Iterator[None]:
        """Calls made inside, even one after another, share one wave, with any call in
        flight and with the calls other tasks start before the event loop's next turn."""
        if self._in_flight == 0:
            self._hold_from_idle = True  # the wave begins with the first call made
        self._in_flight += 1
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            asyncio.get_running_loop().call_soon(self._release)

    def _release(self) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self._hold_from_idle = False

    async def _count(self, call: Callable[[], Awaitable[R]]) -> R:
        if self._in_flight == 0 or self._hold_from_idle:
            self.waves += 1
            self._hold_from_idle = False
        self._in_flight += 1
        self.calls += 1
        try:
            if not self._held:
                await asyncio.sleep(0)
            return await call()
        finally:
            self._in_flight -= 1

    async def get(self, plan: Get) -> Item | None:
        return await self._count(lambda: self.inner.get(plan))

    async def batch_get(self, plan: BatchGet) -> list[Item]:
        return await self._count(lambda: self.inner.batch_get(plan))

    async def query(self, plan: Query) -> QueryResult:
        return await self._count(lambda: self.inner.query(plan))

    async def put(self, plan: Put) -> None:
        await self._count(lambda: self.inner.put(plan))

    async def update(self, plan: Update) -> Item:
        return await self._count(lambda: self.inner.update(plan))

    async def delete(self, plan: Delete) -> None:
        await self._count(lambda: self.inner.delete(plan))

    async def batch_write(self, actions: Sequence[Put | Delete]) -> None:
        await self._count(lambda: self.inner.batch_write(actions))

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        await self._count(lambda: self.inner.transact_write(actions))

    async def close(self) -> None:
        """The shared store outlives the request: closing a request's view does nothing."""

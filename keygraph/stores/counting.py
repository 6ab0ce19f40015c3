"""A Store wrapper that counts one request's store calls and its sequential waves: the
server's `extensions.storeCalls` and `storeWaves`, and the waves a trace shows
(keygraph/serve/tracing.py).

A wave is a stretch of time during which at least one store call is in flight: calls sent
together (one level of a nested query) share a wave, and a call that has to wait for another's
answer starts a new one. Every call first yields to the event loop once, so calls started by
the same tick all register before any runs, even on a store that answers without awaiting.
Calls that a caller makes one after another inside `one_wave()` (none waiting for another's
answer) count as one wave too, and skip that yield.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from keygraph.store import Store
from keygraph.stores.view import Planned, StoreView

R = TypeVar("R")


class CountingStore(StoreView):
    """Forwards every call to `inner`, counting calls and waves; one per request. Closing
    it leaves the shared store open."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.calls = 0
        self.waves = 0
        self._in_flight = 0
        self._held = 0
        self._hold_from_idle = False

    @property
    def current_wave(self) -> int:
        """The wave of the calls in flight through this store now; 0 while none is (a call
        made then is another store's)."""
        return self.waves if self._in_flight else 0

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

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
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

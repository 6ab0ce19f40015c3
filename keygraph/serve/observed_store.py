"""The store under a whole server, observed (both servers'): each call's latency, errors
and capacity units in the metrics (metrics.py), by DynamoDB operation and access pattern,
and, inside a traced request, its span in its wave (tracing.py) with the pattern, the keys
it names and the units it used. Each library is imported only when its half is on."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from keygraph import capacity
from keygraph.capacity import Meter
from keygraph.plan import Query, QueryResult
from keygraph.store import Store, query_each
from keygraph.stores.view import Forwarding, Planned

from .patterns import OTHER

if TYPE_CHECKING:
    from .tracing import RequestTrace

R = TypeVar("R")


class ObservedStore(Forwarding):
    """Forwards every call to `inner`, recording it in the metrics (when `metered`) and in
    the current request's trace (when `traced`), under its pattern (`pattern_of` its
    DynamoDB operation and plan; None: `other`)."""

    def __init__(
        self,
        inner: Store,
        pattern_of: Callable[[str, Planned], str] | None,
        *,
        metered: bool,
        traced: bool,
    ) -> None:
        super().__init__(inner)
        self.pattern_of = pattern_of
        self._observe: Callable[[str, str, float, Meter, Exception | None], None] | None = None
        if metered:  # prometheus_client is loaded only then
            from .metrics import observe_store_call

            self._observe = observe_store_call
        self._current: ContextVar[RequestTrace | None] | None = None
        if traced:  # OpenTelemetry, only then
            from .tracing import CURRENT

            self._current = CURRENT

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        """Makes the call, observed under its plan's pattern."""
        request = self._traced()
        if request is None and self._observe is None:
            return await call()
        pattern = OTHER if self.pattern_of is None else self.pattern_of(kind, plan)
        span = None if request is None else request.call(kind, plan, pattern)
        started = time.perf_counter()
        error: Exception | None = None
        result: Any = None
        try:
            with capacity.metering() as meter:  # this call's units alone
                result = await call()
        except Exception as exc:
            error = exc
            raise
        finally:
            elapsed = time.perf_counter() - started
            capacity.add(meter.read_units, meter.write_units)  # any meter around it too
            if self._observe is not None:
                self._observe(kind, pattern, elapsed, meter, error)
            if span is not None and request is not None:
                request.called(span, meter, result, error)
        return result  # type: ignore[no-any-return]

    def _traced(self) -> RequestTrace | None:
        """The trace of the request making the call, when it is kept and still open."""
        request = None if self._current is None else self._current.get()
        return None if request is None or request.done else request

    async def query_many(self, plans: Sequence[Query]) -> list[QueryResult]:
        """Unobserved, as the inner store reads them together (query_each); observed, each
        Query on its own."""
        if self._observe is None and self._traced() is None:
            return await query_each(self.inner, plans)
        return list(await asyncio.gather(*(self.query(plan) for plan in plans)))

"""The store under the whole server, observed: each call's latency, errors and capacity
units as metrics by DynamoDB operation and access pattern, and, inside a traced request, a
span in its wave (tracing.py) with the pattern, the keys it names and the units it used."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from opentelemetry import trace

from keygraph import capacity
from keygraph.plan import BatchGet, Query, QueryResult, Scan
from keygraph.serve.metrics import observe_store_call
from keygraph.serve.patterns import Patterns
from keygraph.store import Store, query_each
from keygraph.stores.view import Forwarding, Planned
from server.observability.tracing import CURRENT

R = TypeVar("R")


class ObservedStore(Forwarding):
    """Forwards every call to `inner`, recording it in the metrics (when `metered`) and in
    the current request's trace (when `tracer`)."""

    def __init__(
        self,
        inner: Store,
        patterns: Patterns,
        *,
        metered: bool,
        tracer: trace.Tracer | None,
    ) -> None:
        super().__init__(inner)
        self.patterns = patterns
        self.metered = metered
        self.tracer = tracer

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        """Makes the call, observed under its plan's pattern."""
        if self._quiet():
            return await call()
        request = CURRENT.get() if self.tracer is not None else None
        pattern, keys = self._named(kind, plan)
        span = None
        if request is not None and not request.done and self.tracer is not None:
            attributes: dict[str, Any] = {
                "db.system.name": "aws.dynamodb",
                "db.operation.name": kind,
                "keygraph.pattern": pattern,
                "keygraph.keys": keys,
            }
            if isinstance(plan, Query) and plan.index is not None:
                attributes["aws.dynamodb.index_name"] = plan.index
            span = self.tracer.start_span(
                f"{kind} {pattern}",
                context=request.call_started(),
                kind=trace.SpanKind.CLIENT,
                attributes=attributes,
            )
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
            capacity.add(meter.read_units, meter.write_units)  # the request's meter too
            if self.metered:
                observe_store_call(kind, pattern, elapsed, meter, error)
            if span is not None and request is not None:
                span.set_attribute("keygraph.read_units", meter.read_units)
                span.set_attribute("keygraph.write_units", meter.write_units)
                items = _items(result)
                if items is not None:
                    span.set_attribute("keygraph.items", items)
                if error is not None:
                    span.record_exception(error)
                    span.set_status(trace.StatusCode.ERROR, type(error).__name__)
                span.end()
                request.call_ended()
        return result  # type: ignore[no-any-return]

    def _quiet(self) -> bool:
        """Nothing to record: metrics off, and no traced request (or an unsampled one)."""
        if self.metered or self.tracer is None:
            return not self.metered
        request = CURRENT.get()
        return request is None or request.done

    def _named(self, kind: str, plan: Planned) -> tuple[str, int]:
        """The call's pattern, and how many items it names (0: a query's or a scan's)."""
        pattern = self.patterns.of_call(kind, plan)
        if isinstance(plan, Sequence):
            return pattern, len(plan)
        if isinstance(plan, BatchGet):
            return pattern, len(plan.keys)
        return pattern, 0 if isinstance(plan, (Query, Scan)) else 1

    async def query_many(self, plans: Sequence[Query]) -> list[QueryResult]:
        """Unobserved, as the inner store reads them together (query_each); observed, each
        Query on its own."""
        if self._quiet():
            return await query_each(self.inner, plans)
        return list(await asyncio.gather(*(self.query(plan) for plan in plans)))


def _items(result: object) -> int | None:
    """How many items a read returned."""
    if isinstance(result, QueryResult):
        return len(result.items)
    if isinstance(result, list):
        return len(result)
    if isinstance(result, dict):
        return 1
    return None

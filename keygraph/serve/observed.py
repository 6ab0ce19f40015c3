"""What `keygraph serve` records in its Prometheus metrics (metrics.py) when they are on:
each /graphql request's duration by operation name and outcome code, its count by operation
type and HTTP status, each error it answered by code, the requests in flight, and each store
call with its capacity units (by its access pattern, patterns.py, else `other`)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from graphql import OperationDefinitionNode
from prometheus_client import Counter
from starlette.responses import Response

from keygraph import capacity
from keygraph.store import Store
from keygraph.stores.view import Forwarding, Planned

from . import metrics
from .answer import OK, Answer

R = TypeVar("R")
OTHER = "other"
"""The pattern of a store call when none is named."""

REQUESTS = Counter(
    "keygraph_requests",
    "GraphQL requests by operation type (query, mutation; empty before one is known) and "
    "HTTP status.",
    ["type", "status"],
)
ERRORS = Counter(
    "keygraph_errors",
    "Errors answered, each by its code (a refusal's, an operation's errors each).",
    ["code"],
)
TYPES_BY = metrics.Children(REQUESTS)
ERRORS_BY = metrics.Children(ERRORS)


class Observer:
    """Records each request answered, operation names labelled from a bounded set."""

    def __init__(self) -> None:
        self.operations = metrics.OperationNames()

    async def observe(self, answer: Callable[[], Awaitable[Response]]) -> Response:
        """The response `answer` makes, its request recorded."""
        started = time.perf_counter()
        metrics.IN_FLIGHT.inc()
        response: Response | None = None
        try:
            response = await answer()
            return response
        finally:
            metrics.IN_FLIGHT.dec()
            self._record(response, time.perf_counter() - started)

    def _record(self, response: Response | None, elapsed: float) -> None:
        status = 500 if response is None else response.status_code
        code = OK if status < 400 else f"HTTP_{status}"
        errors: tuple[str, ...] = ()
        operation: OperationDefinitionNode | None = None
        if isinstance(response, Answer):
            code, errors, operation = response.code, response.errors, response.operation
        name = operation.name.value if operation is not None and operation.name else None
        kind = operation.operation.value if operation is not None else ""
        metrics.observe_request(self.operations.label(name), code, status, elapsed)
        TYPES_BY(kind, str(status)).inc()
        for error in errors:
            ERRORS_BY(error).inc()


class MeteredStore(Forwarding):
    """Forwards every call to `inner`, recording its duration, units and error in the
    metrics under its pattern (`pattern_of` its DynamoDB operation and plan)."""

    def __init__(
        self, inner: Store, pattern_of: Callable[[str, Planned], str] | None = None
    ) -> None:
        super().__init__(inner)
        self.pattern_of = pattern_of

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        pattern = OTHER if self.pattern_of is None else self.pattern_of(kind, plan)
        started = time.perf_counter()
        error: Exception | None = None
        try:
            with capacity.metering() as meter:  # this call's units alone
                return await call()
        except Exception as exc:
            error = exc
            raise
        finally:
            capacity.add(meter.read_units, meter.write_units)  # any meter around it too
            metrics.observe_store_call(kind, pattern, time.perf_counter() - started, meter, error)

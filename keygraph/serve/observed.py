"""What `keygraph serve` records in its Prometheus metrics (metrics.py) when they are on:
each /graphql request's duration by operation name and outcome code, its count by operation
type and HTTP status, each error it answered by code, and the requests in flight. Its store
calls are recorded by observed_store.py, as the repository's server records its own."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from prometheus_client import Counter
from starlette.responses import Response

from . import metrics
from .answer import Answer, operation_name, outcome

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
        status, code, operation = outcome(response)
        errors = response.errors if isinstance(response, Answer) else ()
        name = operation_name(operation)
        kind = operation.operation.value if operation is not None else ""
        metrics.observe_request(self.operations.label(name), code, status, elapsed)
        TYPES_BY(kind, str(status)).inc()
        for error in errors:
            ERRORS_BY(error).inc()

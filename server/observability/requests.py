"""Each GraphQL request observed from outside the endpoint (an ASGI wrapper): its duration by
operation name and outcome code, refusals, requests in flight, per-tenant counts when
allowed, and its span, continuing the caller's W3C trace (`traceparent`), made as
`keygraph serve` makes its own (keygraph/serve/tracing.py).

What the endpoint learnt about the request (its operation, code, tenant, store calls and
units) is read, once it answered, from the request object it leaves in the ASGI scope under
REQUEST_SCOPE_KEY: any object with ObservedRequest's attributes (the edge's GraphQLRequest)."""

from __future__ import annotations

import functools
import time
from typing import Protocol

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keygraph.capacity import Meter
from keygraph.serve import metrics as served_metrics
from keygraph.serve.answer import OK
from keygraph.serve.metrics import OperationNames
from keygraph.serve.tracing import RequestTrace
from server.observability import REQUEST_SCOPE_KEY, metrics


class _Tenanted(Protocol):
    @property
    def tenant(self) -> str: ...


class _Counted(Protocol):
    @property
    def calls(self) -> int: ...
    @property
    def current_wave(self) -> int: ...


class _Estimated(Protocol):
    @property
    def cost(self) -> int: ...


class _Learnt(Protocol):
    @property
    def operation_name(self) -> str | None: ...
    @property
    def counter(self) -> _Counted | None: ...
    @property
    def estimate(self) -> _Estimated | None: ...


class ObservedRequest(Protocol):
    """What the endpoint learnt about a request, as observability reads it: its id, the
    code that decided its response, its tenant, its capacity units, and its operation's
    name, store calls, waves and cost."""

    @property
    def request_id(self) -> str: ...
    @property
    def code(self) -> str | None: ...
    @property
    def claims(self) -> _Tenanted | None: ...
    @property
    def meter(self) -> Meter: ...
    @property
    def ctx(self) -> _Learnt | None: ...


class ObservedEndpoint:
    """Wraps the GraphQL endpoint: metrics when `metered`, spans when `tracer`; tenants as
    labels only when `tenant_labels` (there is no bound on them)."""

    def __init__(
        self,
        endpoint: ASGIApp,
        *,
        metered: bool,
        tracer: trace.Tracer | None,
        tenant_labels: bool,
    ) -> None:
        self.endpoint = endpoint
        self.metered = metered
        self.tracer = tracer
        self.tenant_labels = tenant_labels
        self.operations = OperationNames()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.endpoint(scope, receive, send)
            return
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        started = time.perf_counter()
        traced = self._start_trace(scope) if self.tracer is not None else None
        if self.metered:
            served_metrics.IN_FLIGHT.inc()
        try:
            await self.endpoint(scope, receive, sending)
        finally:
            own: ObservedRequest | None = scope.get(REQUEST_SCOPE_KEY)
            if self.metered:
                served_metrics.IN_FLIGHT.dec()
                self._record(own, status, time.perf_counter() - started)
            if traced is not None:
                self._end_trace(traced, own, status)

    def _record(self, request: ObservedRequest | None, status: int, elapsed: float) -> None:
        code = _code(request, status)
        operation = self.operations.label(_operation(request))
        served_metrics.observe_request(operation, code, status, elapsed)
        if self.tenant_labels and request is not None and request.claims is not None:
            tenant = request.claims.tenant
            metrics.TENANT_REQUESTS.labels(tenant, code).inc()
            meter = request.meter
            if meter.read_units:
                metrics.TENANT_CAPACITY.labels(tenant, "read").inc(meter.read_units)
            if meter.write_units:
                metrics.TENANT_CAPACITY.labels(tenant, "write").inc(meter.write_units)

    def _start_trace(self, scope: Scope) -> RequestTrace:
        """The request's trace, begun: current until `_end_trace`."""
        assert self.tracer is not None
        counted = functools.partial(_waves_counted, scope)
        method, path = scope.get("method", ""), scope["path"]
        return RequestTrace.begin(self.tracer, scope["headers"], method, path, counted)

    def _end_trace(
        self, traced: RequestTrace, request: ObservedRequest | None, status: int
    ) -> None:
        code = _code(request, status)
        more = _learnt(request) if traced.recording else None
        traced.end(status, code, _operation(request), more)


def _learnt(request: ObservedRequest | None) -> dict[str, AttributeValue]:
    """What the endpoint learnt about a request, as its span's attributes."""
    if request is None:
        return {}
    learnt: dict[str, AttributeValue] = {
        "keygraph.request_id": request.request_id,
        "keygraph.read_units": request.meter.read_units,
        "keygraph.write_units": request.meter.write_units,
    }
    if request.claims is not None:
        learnt["keygraph.tenant"] = request.claims.tenant
    ctx = request.ctx
    if ctx is not None and ctx.counter is not None:
        learnt["keygraph.store_calls"] = ctx.counter.calls
    if ctx is not None and ctx.estimate is not None:
        learnt["keygraph.cost.requested"] = ctx.estimate.cost
    return learnt


def _waves_counted(scope: Scope) -> int | None:
    """The wave of the calls the request's counted store has in flight (0 or None: none,
    or no counted store yet)."""
    request: ObservedRequest | None = scope.get(REQUEST_SCOPE_KEY)
    ctx = request.ctx if request is not None else None
    counter = ctx.counter if ctx is not None else None
    return counter.current_wave if counter is not None else None


def _operation(request: ObservedRequest | None) -> str | None:
    ctx = request.ctx if request is not None else None
    return ctx.operation_name if ctx is not None else None


def _code(request: ObservedRequest | None, status: int) -> str:
    """OK, or the code that decided the response (an answer replayed for an Idempotency-Key:
    REPLAYED); a response the endpoint never finished: HTTP_<status> (0: none sent)."""
    if request is not None and request.code is not None:
        return request.code
    if status and status < 400:
        return OK
    return f"HTTP_{status}"

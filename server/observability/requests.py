"""Each GraphQL request observed from outside the endpoint (an ASGI wrapper): its duration by
operation name and outcome code, refusals, requests in flight, per-tenant counts when
allowed, and its span, continuing the caller's W3C trace (`traceparent`).

What the endpoint learnt about the request (its operation, code, tenant, store calls and
units) is read, once it answered, from the request object it leaves in the ASGI scope under
REQUEST_SCOPE_KEY: any object with ObservedRequest's attributes (the edge's GraphQLRequest)."""

from __future__ import annotations

import time
from typing import Any, Protocol

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keygraph.capacity import Meter
from keygraph.serve import metrics as served_metrics
from keygraph.serve.answer import OK
from keygraph.serve.metrics import OperationNames
from server.observability import REQUEST_SCOPE_KEY, metrics
from server.observability.tracing import CURRENT, RequestTrace

_PROPAGATOR = TraceContextTextMapPropagator()


class _Tenanted(Protocol):
    @property
    def tenant(self) -> str: ...


class _Counted(Protocol):
    @property
    def calls(self) -> int: ...
    @property
    def waves(self) -> int: ...


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

    def _start_trace(self, scope: Scope) -> tuple[RequestTrace, object, object]:
        """The request's span, current (with its trace) until `_end_trace`."""
        assert self.tracer is not None
        carrier = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in scope["headers"]
            if name in (b"traceparent", b"tracestate")
        }
        parent = _PROPAGATOR.extract(carrier) if carrier else None
        span = self.tracer.start_span(
            "graphql",
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes={"http.request.method": scope.get("method", ""), "url.path": scope["path"]},
        )
        traced = RequestTrace(self.tracer, span, lambda: _waves_counted(scope))
        # an unsampled request's trace is not recorded: no wave or call spans under it
        current = CURRENT.set(traced if span.is_recording() else None)
        return traced, current, otel_context.attach(trace.set_span_in_context(span))

    def _end_trace(
        self,
        traced: tuple[RequestTrace, Any, Any],
        request: ObservedRequest | None,
        status: int,
    ) -> None:
        trace_of, current_token, context_token = traced
        otel_context.detach(context_token)
        CURRENT.reset(current_token)
        trace_of.finish()
        span = trace_of.request
        if not span.is_recording():
            span.end()
            return
        code = _code(request, status)
        operation = _operation(request)
        if operation:
            span.update_name(operation)
            span.set_attribute("graphql.operation.name", operation)
        span.set_attribute("http.response.status_code", status)
        span.set_attribute("keygraph.code", code)
        span.set_attribute("keygraph.store_waves", trace_of.waves)
        if request is not None:
            span.set_attribute("keygraph.request_id", request.request_id)
            span.set_attribute("keygraph.read_units", request.meter.read_units)
            span.set_attribute("keygraph.write_units", request.meter.write_units)
            if request.claims is not None:
                span.set_attribute("keygraph.tenant", request.claims.tenant)
            ctx = request.ctx
            if ctx is not None and ctx.counter is not None:
                span.set_attribute("keygraph.store_calls", ctx.counter.calls)
            if ctx is not None and ctx.estimate is not None:
                span.set_attribute("keygraph.cost.requested", ctx.estimate.cost)
        if status >= 500 or status == 0 or code == "INTERNAL":
            span.set_status(trace.StatusCode.ERROR, code)
        span.end()


def _waves_counted(scope: Scope) -> int | None:
    """The waves the request's counted store has seen (None before it has one)."""
    request: ObservedRequest | None = scope.get(REQUEST_SCOPE_KEY)
    ctx = request.ctx if request is not None else None
    counter = ctx.counter if ctx is not None else None
    return counter.waves if counter is not None else None


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

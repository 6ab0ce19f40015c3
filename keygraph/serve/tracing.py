"""OpenTelemetry traces of GraphQL requests, as an app makes them (traced.py): a span per
request, continuing the caller's W3C trace (`traceparent`); below it a span per wave of
store calls; below a wave a span per store call (observed_store.py).

A wave is one of those keygraph.stores.counting.CountingStore counts: the request's store
calls that went out together, before any of them had to wait for another's answer. A wave's
span opens with its first call and ends with its last, so a trace shows the request's round
trips one after another, and what each sent at once. Calls made outside the request's
counted store (an Idempotency-Key's record) hang from the request's span.

Imported only when tracing is on (trace_provider.py): an app tracing nothing runs none of
this and loads no OpenTelemetry. Spans go to an OTLP collector (the `otlp` extra) or to
standard output.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar, Token
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import AttributeValue

from keygraph.capacity import Meter
from keygraph.plan import BatchGet, Query, QueryResult, Scan
from keygraph.stores.view import Planned

from .trace_settings import OTLP_MISSING, TraceSettings

INSTRUMENTATION = "keygraph"
_PROPAGATOR = TraceContextTextMapPropagator()
_CARRIED = (b"traceparent", b"tracestate")


class RequestTrace:
    """One request's spans: the request's own, the wave open now, and its store calls'."""

    __slots__ = (
        "_context",
        "_current",
        "_last_end",
        "_wave",
        "_wave_number",
        "_wave_started",
        "counted",
        "done",
        "request",
        "tracer",
    )

    def __init__(
        self, tracer: trace.Tracer, request: trace.Span, counted: Callable[[], int | None]
    ) -> None:
        self.tracer = tracer
        self.request = request
        self.counted = counted
        """The wave of the calls the request's counted store has in flight (None or 0: a
        call made now is not one of them)."""
        self.done = False
        """Set once the request answered: later calls (a cleanup it left) are not traced."""
        self._wave: trace.Span | None = None
        self._wave_number = 0
        self._wave_started = 0
        self._last_end = 0
        self._current: Token[RequestTrace | None] | None = None
        self._context: Token[Context] | None = None

    @classmethod
    def begin(
        cls,
        tracer: trace.Tracer,
        headers: Iterable[tuple[bytes, bytes]],
        method: str,
        path: str,
        counted: Callable[[], int | None],
    ) -> RequestTrace:
        """A request's trace, begun: its span, a child of the trace its `traceparent` header
        names (if any), current (CURRENT, and OpenTelemetry's context) until `end`. Call
        `end` in the same task."""
        carrier = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in headers
            if name in _CARRIED
        }
        parent = _PROPAGATOR.extract(carrier) if carrier else None
        span = tracer.start_span(
            "graphql",
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes={"http.request.method": method, "url.path": path},
        )
        began = cls(tracer, span, counted)
        # an unsampled request's trace is not recorded: no wave or call spans under it
        began._current = CURRENT.set(began if span.is_recording() else None)
        began._context = otel_context.attach(trace.set_span_in_context(span))
        return began

    @property
    def recording(self) -> bool:
        """Whether the request's spans are kept (its trace was sampled)."""
        return self.request.is_recording()

    @property
    def waves(self) -> int:
        return self._wave_number

    def end(
        self,
        status: int,
        code: str,
        operation: str | None,
        attributes: Mapping[str, AttributeValue] | None = None,
    ) -> None:
        """The request answered with `status`, decided by `code` (OK, or an error's code),
        having run `operation` (its name, when it has one): its span ends, named by the
        operation, with those and `attributes`; no more spans go under it."""
        if self._context is not None:
            otel_context.detach(self._context)
        if self._current is not None:
            CURRENT.reset(self._current)
        self.finish()
        span = self.request
        if not span.is_recording():
            span.end()
            return
        if operation:
            span.update_name(operation)
            span.set_attribute("graphql.operation.name", operation)
        span.set_attribute("http.response.status_code", status)
        span.set_attribute("keygraph.code", code)
        span.set_attribute("keygraph.store_waves", self.waves)
        if attributes:
            span.set_attributes(attributes)
        if status >= 500 or status == 0 or code == "INTERNAL":
            span.set_status(trace.StatusCode.ERROR, code)
        span.end()

    def finish(self) -> None:
        """At the request's end: its last wave ends, and no more spans go under it."""
        self.done = True
        self._end_wave()

    def call_started(self) -> Context:
        """The context of a store call starting now: its wave's, opened by its first call;
        the request's, before the counted store has seen a call."""
        number = self.counted()
        if not number:
            return trace.set_span_in_context(self.request)
        if self._wave is None or number != self._wave_number:
            self._end_wave()
            self._wave_number = number
            self._wave_started = time.time_ns()
            self._wave = self.tracer.start_span(
                f"wave {number}",
                context=trace.set_span_in_context(self.request),
                attributes={"keygraph.wave": number},
                start_time=self._wave_started,
            )
        return trace.set_span_in_context(self._wave)

    def call_ended(self) -> None:
        self._last_end = time.time_ns()

    def _end_wave(self) -> None:
        if self._wave is not None:
            self._wave.end(end_time=max(self._last_end, self._wave_started))
            self._wave = None

    def call(self, kind: str, plan: Planned, pattern: str) -> trace.Span:
        """The span of a store call starting now, in its wave: its DynamoDB operation
        (`kind`), its access pattern, and how many items its plan names."""
        attributes: dict[str, Any] = {
            "db.system.name": "aws.dynamodb",
            "db.operation.name": kind,
            "keygraph.pattern": pattern,
            "keygraph.keys": keys_named(plan),
        }
        if isinstance(plan, Query) and plan.index is not None:
            attributes["aws.dynamodb.index_name"] = plan.index
        return self.tracer.start_span(
            f"{kind} {pattern}",
            context=self.call_started(),
            kind=trace.SpanKind.CLIENT,
            attributes=attributes,
        )

    def called(
        self, span: trace.Span, meter: Meter, result: object, error: Exception | None
    ) -> None:
        """A store call's span ends, with the units it used, the items it read, its error."""
        span.set_attribute("keygraph.read_units", meter.read_units)
        span.set_attribute("keygraph.write_units", meter.write_units)
        items = items_read(result)
        if items is not None:
            span.set_attribute("keygraph.items", items)
        if error is not None:
            span.record_exception(error)
            span.set_status(trace.StatusCode.ERROR, type(error).__name__)
        span.end()
        self.call_ended()


CURRENT: ContextVar[RequestTrace | None] = ContextVar("keygraph_request_trace", default=None)
"""The trace of the request the running code serves (its tasks inherit it); None outside
a request, or in one whose trace is not kept."""


def keys_named(plan: Planned) -> int:
    """How many items a call's plan names (0: a query's or a scan's)."""
    if isinstance(plan, Sequence):
        return len(plan)
    if isinstance(plan, BatchGet):
        return len(plan.keys)
    return 0 if isinstance(plan, (Query, Scan)) else 1


def items_read(result: object) -> int | None:
    """How many items a read returned (None: not a read)."""
    if isinstance(result, QueryResult):
        return len(result.items)
    if isinstance(result, list):
        return len(result)
    if isinstance(result, dict):
        return 1
    return None


def _exporter(settings: TraceSettings) -> SpanExporter:
    if settings.trace_exporter == "console":
        return ConsoleSpanExporter(out=sys.stdout)  # as it is now, not at import
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:
        raise ValueError(OTLP_MISSING) from exc
    return OTLPSpanExporter()  # endpoint, headers: OTEL_EXPORTER_OTLP_* variables


def provider_for(settings: TraceSettings) -> TracerProvider:
    """The tracer provider the settings ask for: sampled at KEYGRAPH_TRACE_SAMPLE (a
    request's caller decides when its traceparent says), spans exported in batches. Whoever
    makes it shuts it down, which sends the spans left."""
    provider = TracerProvider(
        resource=Resource.create({"service.name": settings.trace_service}),
        sampler=ParentBased(TraceIdRatioBased(settings.trace_sample)),
    )
    provider.add_span_processor(BatchSpanProcessor(_exporter(settings)))
    return provider

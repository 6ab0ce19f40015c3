"""OpenTelemetry traces: a span per GraphQL request (requests.py), below it a span per wave
of store calls, and below a wave a span per store call (store.py).

A wave is one of those `extensions.storeWaves` counts (keygraph/stores/counting.py): the
request's store calls that went out together, before any of them had to wait for another's
answer. A wave's span opens with its first call and ends with its last, so a trace shows
the request's round trips one after another, and what each sent at once. Calls made outside
the request's counted store (an Idempotency-Key's record) hang from the request's span.

Tracing is off unless KEYGRAPH_TRACING is set: no span code then runs at all (app.py installs
none of it). Spans go to an OTLP collector (the `otlp` extra) or to standard output.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextvars import ContextVar

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SpanExporter,
)
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

from server.settings import Settings, SettingsError

INSTRUMENTATION = "keygraph"


class RequestTrace:
    """One request's spans: the request's own, and the wave open now."""

    __slots__ = (
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
        """The waves the request's counted store has seen so far (None: no count yet)."""
        self.done = False
        """Set once the request answered: later calls (a cleanup it left) are not traced."""
        self._wave: trace.Span | None = None
        self._wave_number = 0
        self._wave_started = 0
        self._last_end = 0

    @property
    def waves(self) -> int:
        return self._wave_number

    def call_started(self) -> Context:
        """The context of a store call starting now: its wave's, opened by its first call."""
        number = self.counted()
        if number is None:
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

    def finish(self) -> None:
        """At the request's end: its last wave ends, and no more spans go under it."""
        self.done = True
        self._end_wave()


CURRENT: ContextVar[RequestTrace | None] = ContextVar("keygraph_request_trace", default=None)
"""The trace of the request the running code serves (its tasks inherit it)."""


def _exporter(settings: Settings) -> SpanExporter:
    if settings.trace_exporter == "console":
        return ConsoleSpanExporter(out=sys.stdout)  # as it is now, not at import
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:
        raise SettingsError(
            "KEYGRAPH_TRACE_EXPORTER=otlp needs the OTLP exporter: "
            "pip install 'keygraph[otlp]' (or set KEYGRAPH_TRACE_EXPORTER=console)"
        ) from exc
    return OTLPSpanExporter()  # endpoint, headers: OTEL_EXPORTER_OTLP_* variables


def provider_for(settings: Settings) -> TracerProvider:
    """The tracer provider the settings ask for: sampled at KEYGRAPH_TRACE_SAMPLE (a
    request's caller decides when its traceparent says), spans exported in batches."""
    provider = TracerProvider(
        resource=Resource.create({"service.name": settings.trace_service}),
        sampler=ParentBased(TraceIdRatioBased(settings.trace_sample)),
    )
    provider.add_span_processor(BatchSpanProcessor(_exporter(settings)))
    return provider

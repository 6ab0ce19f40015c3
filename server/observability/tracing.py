"""OpenTelemetry traces: a span per GraphQL request (requests.py), below it a span per wave
of store calls, and below a wave a span per store call (store.py).

A wave is what `extensions.storeWaves` counts (server/graphql/counting.py): a stretch of time
during which at least one of the request's store calls is in flight. Calls that start while
another is in flight, or in the same turn of the event loop as the last one ended, join its
wave; the next call after a pause (a resolver waiting on the answer) opens the next one. So
a trace shows the request's round trips one after another, and what each sent at once.

Tracing is off unless KEYGRAPH_TRACING is set: no span code then runs at all (app.py installs
none of it). Spans go to an OTLP collector (the `otlp` extra) or to standard output.
"""

from __future__ import annotations

import asyncio
import time
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

    __slots__ = ("_wave", "_wave_ended", "done", "in_flight", "request", "tracer", "waves")

    def __init__(self, tracer: trace.Tracer, request: trace.Span) -> None:
        self.tracer = tracer
        self.request = request
        self.in_flight = 0
        self.waves = 0
        self.done = False
        """Set once the request answered: later calls (a cleanup it left) are not traced."""
        self._wave: trace.Span | None = None
        self._wave_ended = 0

    def call_started(self) -> Context:
        """The context of a store call starting now: in the open wave, or a new one."""
        if self._wave is None:
            self.waves += 1
            self._wave = self.tracer.start_span(
                f"wave {self.waves}",
                context=trace.set_span_in_context(self.request),
                attributes={"keygraph.wave": self.waves},
            )
        self.in_flight += 1
        return trace.set_span_in_context(self._wave)

    def call_ended(self) -> None:
        self.in_flight -= 1
        if self.in_flight == 0:
            self._wave_ended = time.time_ns()
            asyncio.get_running_loop().call_soon(self._close_wave)

    def _close_wave(self) -> None:
        """Ends the wave unless a call started since its last one ended."""
        wave = self._wave
        if self.in_flight == 0 and wave is not None:
            self._wave = None
            wave.end(end_time=self._wave_ended)

    def finish(self) -> None:
        """At the request's end: no more spans under it."""
        self.done = True
        self._close_wave()


CURRENT: ContextVar[RequestTrace | None] = ContextVar("keygraph_request_trace", default=None)
"""The trace of the request the running code serves (its tasks inherit it)."""


def _exporter(settings: Settings) -> SpanExporter:
    if settings.trace_exporter == "console":
        return ConsoleSpanExporter()
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

"""What traces a server sends, from the KEYGRAPH_TRACING, KEYGRAPH_TRACE_EXPORTER,
KEYGRAPH_TRACE_SAMPLE and KEYGRAPH_TRACE_SERVICE variables: both servers read these, `keygraph
serve` here and the repository's server as part of its settings (server/settings.py).

Nothing here imports OpenTelemetry: with tracing off, neither server loads it. With it on,
the `tracing` extra must be installed (the `otlp` extra too for the OTLP exporter), which
`TraceSettings.check_traces` makes sure of before anything is served."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from .environment import flag, number, values_set

TraceExporter = Literal["otlp", "console"]
TRACE_EXPORTERS: tuple[TraceExporter, ...] = ("otlp", "console")
SDK = "opentelemetry.sdk.trace"
OTLP_EXPORTER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
OTLP_MISSING = (
    "KEYGRAPH_TRACE_EXPORTER=otlp needs the OTLP exporter: "
    "pip install 'keygraph[otlp]' (or set KEYGRAPH_TRACE_EXPORTER=console)"
)


@dataclass(frozen=True)
class TraceSettings:
    """Whether requests are traced, and where their spans go; each field is set by KEYGRAPH_
    and its name in capitals."""

    tracing: bool = False
    """OpenTelemetry spans per request, wave and store call (tracing.py)."""
    trace_exporter: TraceExporter = "otlp"
    """Where spans go: an OTLP collector over HTTP (needs the `otlp` extra; endpoint and
    headers from OTEL_EXPORTER_OTLP_*), or standard output (`console`)."""
    trace_sample: float = 1.0
    """The share of traces begun here that are kept, 0 to 1 (0: only those a caller's
    traceparent asks for); a caller's traceparent decides its own."""
    trace_service: str = "keygraph"
    """The spans' service.name."""

    def check_traces(self) -> None:
        """ValueError saying what to change when these settings cannot work."""
        if not 0 <= self.trace_sample <= 1:
            raise ValueError(f"KEYGRAPH_TRACE_SAMPLE must be in [0, 1], not {self.trace_sample}")
        if self.trace_exporter not in TRACE_EXPORTERS:
            kinds = ", ".join(TRACE_EXPORTERS)
            raise ValueError(
                f"KEYGRAPH_TRACE_EXPORTER must be one of {kinds}, not {self.trace_exporter!r}"
            )
        if not self.tracing:
            return
        if not _importable(SDK):
            raise ValueError(
                "KEYGRAPH_TRACING needs OpenTelemetry: pip install 'keygraph[tracing]'"
            )
        if self.trace_exporter == "otlp" and not _importable(OTLP_EXPORTER):
            raise ValueError(OTLP_MISSING)


TRACE_VARIABLES = {f"KEYGRAPH_{f.name.upper()}": f.name for f in fields(TraceSettings)}
"""Each trace setting's variable, and the field it sets."""


def trace_values(environ: Mapping[str, str]) -> dict[str, Any]:
    """The trace settings `environ` sets (an empty variable is unset), by field, converted;
    ValueError for a value that is not of its setting's kind."""
    return values_set(environ, TRACE_VARIABLES, {"tracing": flag, "trace_sample": number})


def trace_settings(environ: Mapping[str, str] | None = None) -> TraceSettings:
    """The trace settings of `environ` (by default the process's), checked; ValueError when
    they cannot work."""
    settings = TraceSettings(**trace_values(os.environ if environ is None else environ))
    settings.check_traces()
    return settings


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False

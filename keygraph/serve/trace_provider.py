"""The tracer provider trace settings ask for, OpenTelemetry imported only when they trace."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .trace_settings import TraceSettings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider


def tracer_provider(settings: TraceSettings) -> TracerProvider | None:
    """Where the spans go, as `settings` ask (tracing.provider_for); None when tracing is
    off, and then OpenTelemetry is not imported."""
    if not settings.tracing:
        return None
    from .tracing import provider_for

    return provider_for(settings)

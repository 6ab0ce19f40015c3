"""What the app installs for metrics and traces, as the settings ask: nothing at all when
both are off, so that an unobserved server runs none of this package's code and imports
neither prometheus_client nor OpenTelemetry."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

import generated
from keygraph.store import Store
from server.settings import Settings

if TYPE_CHECKING:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

METRICS_PATH = "/metrics"
SPEC = Path(generated.__file__).resolve().parent.parent / "access_patterns.toml"
"""The spec the generated package was made from: its store calls' patterns."""


class Observability:
    """Metrics (`metered`) and a tracer, each on or off; the tracer's spans go to
    `provider` when one is given (tests, benchmarks), else as the settings say."""

    def __init__(self, settings: Settings, provider: TracerProvider | None = None) -> None:
        self.settings = settings
        self.metered = settings.metrics_enabled
        self.owned: TracerProvider | None = None
        """The provider made here from the settings, shut down with the app."""
        self.tracer: trace.Tracer | None = None
        if settings.tracing:
            from keygraph.serve.tracing import INSTRUMENTATION, provider_for

            if provider is None:
                provider = self.owned = provider_for(settings)
            self.tracer = provider.get_tracer(INSTRUMENTATION)

    @property
    def on(self) -> bool:
        return self.metered or self.tracer is not None

    def store(self, store: Store) -> Store:
        """The store the app serves from: observed, when anything is on."""
        if not self.on:
            return store
        from keygraph.serve.observed_store import ObservedStore
        from keygraph.serve.patterns import Patterns

        traced = self.tracer is not None
        pattern_of = Patterns.load(SPEC).of_call
        return ObservedStore(store, pattern_of, metered=self.metered, traced=traced)

    def endpoint(self, endpoint: ASGIApp) -> ASGIApp:
        """The GraphQL endpoint, observed when anything is on."""
        if not self.on:
            return endpoint
        from server.observability.requests import ObservedEndpoint

        return ObservedEndpoint(
            endpoint,
            metered=self.metered,
            tracer=self.tracer,
            tenant_labels=self.settings.metrics_tenant_label,
        )

    def routes(self) -> list[BaseRoute]:
        """/metrics on the app's port, when a token guards it."""
        token = self.settings.metrics_token
        if token is None:
            return []
        from keygraph.serve.metrics import metrics_response

        async def metrics(request: Request) -> Response:
            return metrics_response(request, token)

        return [Route(METRICS_PATH, metrics)]

    @contextlib.asynccontextmanager
    async def running(self, store: Store) -> AsyncIterator[None]:
        """While the app serves: the table's gauges kept fresh; at the end, spans sent."""
        try:
            if self.metered:
                from server.observability import exposition

                async with exposition.reading_table(store):
                    yield
            else:
                yield
        finally:
            if self.owned is not None:
                self.owned.shutdown()

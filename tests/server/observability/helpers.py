"""An app with metrics or traces on, over a fresh embedded store, and /metrics read back as
numbers."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import httpx
from opentelemetry.sdk.trace import TracerProvider

from generated.table import TABLE
from keygraph.store import Store
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.stores.view import Planned, StoreView
from server.auth.tokens import issue_token
from server.edge.app import create_app
from server.settings import Limits, Settings
from tests.keygraph.api.metrics_samples import Samples
from tests.keygraph.api.metrics_samples import scrape as scrape_samples
from tests.server.conftest import SECRET

TOKEN = "metrics-token-" + "m" * 20
R = TypeVar("R")


def settings_for(tmp_path: Path, **changes: Any) -> Settings:
    limits = changes.pop("limits", Limits())
    base = Settings(env="dev", data_dir=tmp_path, jwt_secret=SECRET, limits=limits)
    return replace(base, **changes).resolved()


def admin_token(settings: Settings, tenant: str = "acme") -> str:
    return issue_token(settings, tenant, "alice", roles=["admin"])


@contextlib.asynccontextmanager
async def app_client(
    settings: Settings,
    wrap: Callable[[Store], Store] | None = None,
    provider: TracerProvider | None = None,
    store: Store | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app (lifespan run) over `store`, else a fresh embedded one,
    `wrap`ped if given."""
    if store is None:
        store = EmbeddedStore(TABLE, path=settings.data_dir / "keygraph.sqlite3")
    app = create_app(settings, wrap(store) if wrap else store, tracer_provider=provider)
    transport = httpx.ASGITransport(app=app)
    try:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://keygraph.test") as client,
        ):
            yield client
    finally:
        await store.close()


async def scrape(client: httpx.AsyncClient, token: str = TOKEN) -> Samples:
    """Every sample of /metrics, asked with `token`: (name, labels) to value."""
    return await scrape_samples(client, token)


def value(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    """A sample's value (0 when absent)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    """The sum of the samples of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


class SlowStore(StoreView):
    """Every call waits `delay` seconds first."""

    def __init__(self, inner: Store, delay: float) -> None:
        super().__init__(inner)
        self.delay = delay

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        import asyncio

        await asyncio.sleep(self.delay)
        return await call()

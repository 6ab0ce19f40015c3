"""The ASGI application: GraphQL at /graphql (subscriptions over WebSocket there too),
liveness at /healthz, readiness at /readyz, and /metrics when the settings serve it
(server/observability)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from keygraph.cursor import CursorCodec
from keygraph.errors import StoreError
from keygraph.plan import Get
from keygraph.serve import graphiql, manifest, persisted
from keygraph.serve.gc_tuning import tune_for_serving
from keygraph.serve.subscription_limits import SubscriptionLimits
from keygraph.store import Session, Store
from keygraph.stores import stream_of
from keygraph.streams import ChangeStream, NoStream
from server.api import build_schema
from server.auth.tokens import Verifier, issue_token
from server.domain import cleanup
from server.edge.http import GraphQLEndpoint
from server.edge.shared import Shared, budgets
from server.observability import REQUEST_SCOPE_KEY
from server.observability.wiring import Observability
from server.realtime.limits import ConnectionLimits
from server.settings import Settings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from keygraph.realtime.hub import Hub
    from keygraph.serve.budget import Budget
    from keygraph.shared.places import SharedPlaces
    from server.graphql.schema import KeygraphSchema
    from server.realtime.elected import Elected

_PROBE_KEY = {"PK": "KEYGRAPH#READY", "SK": "PROBE"}
log = logging.getLogger("keygraph.app")


async def _resume_cleanups(session: Session) -> None:
    """Carry on the cleanups of deletes and moves a stopped server left unfinished."""
    try:
        resumed = await cleanup.resume_all(session)
    except (StoreError, OSError) as exc:
        log.warning("pending cleanups not resumed: the store is unavailable (%s)", exc)
        return
    if resumed:
        log.info("resumed %d pending cleanups", resumed)


def _stream_of(store: Store) -> ChangeStream | None:
    """The store's change stream; None, and subscriptions off, when it has none."""
    try:
        return stream_of(store)
    except NoStream as exc:
        log.info("subscriptions are off: %s", exc)
        return None


def _hub(
    settings: Settings, store: Store, stream: ChangeStream | None, shared: Shared | None
) -> tuple[Hub | None, Elected | None]:
    """The hub of subscriptions (None: no stream, none served), fed by the Redis Stream
    of one elected reader when hosts share Redis (then with this worker's contender);
    realtime is loaded only for a stream."""
    if stream is None:
        return None, None
    from keygraph.realtime.hub import Hub
    from server.realtime.changes import change_of

    if shared is None:
        return Hub(stream, settings.poll_interval, change_of), None
    from server.realtime.elected import Elected

    elected = Elected(settings, store, stream, shared.link)
    return Hub(stream, settings.poll_interval, change_of, elected.source), elected


def _realtime(
    settings: Settings,
    schema: KeygraphSchema,
    store: Store,
    verifier: Verifier,
    cursors: CursorCodec,
    hub: Hub,
    budget: Budget,
    places: SharedPlaces | None,
) -> ASGIApp:
    """Subscriptions over WebSocket, fed by `hub`, within the settings' limits."""
    from server.realtime.connection import Realtime

    return Realtime(
        schema,
        store,
        verifier,
        cursors,
        hub,
        SubscriptionLimits(settings, places),
        ConnectionLimits(
            settings.max_ws_connections,
            settings.max_ws_awaiting_init,
            settings.max_ws_connections_per_tenant,
            places,
        ),
        budget,
        init_timeout=settings.ws_init_timeout,
        per_connection=settings.max_subscriptions_per_connection,
    )


@contextlib.asynccontextmanager
async def _running(hub: Hub | None, elected: Elected | None) -> AsyncIterator[None]:
    """The hub and this worker's contender for the reader's lease, for the block."""
    if hub is not None:
        await hub.start()
    if elected is not None:
        elected.start()
    try:
        yield
    finally:
        if elected is not None:
            await elected.stop()
        if hub is not None:
            await hub.stop()


GRAPHQL_PATH = "/graphql"


class App(Starlette):
    """The routes, with GraphQL's own path sent straight to its endpoint: no routing and
    no middleware on the path that takes every request (the endpoint answers its own
    failures)."""

    def __init__(self, graphql: ASGIApp, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.graphql = graphql

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == GRAPHQL_PATH:
            scope["app"] = self
            try:
                await self.graphql(scope, receive, send)
            finally:
                scope.pop(REQUEST_SCOPE_KEY, None)  # the request holds the scope: no cycle left
            return
        await super().__call__(scope, receive, send)


def create_app(
    settings: Settings,
    store: Store,
    *,
    close_store: bool = False,
    tracer_provider: TracerProvider | None = None,
    stream: ChangeStream | None = None,
    own_stream: bool = True,
) -> App:
    """The app over `store` (closed on shutdown when `close_store`); its spans, when traced,
    go to `tracer_provider` if given (else as the settings say). Subscriptions are served
    over WebSocket at /graphql (server/realtime), fed by `stream`, by default the store's
    own change stream (unless not `own_stream`); a store without one serves none."""

    def graphiql_authorization() -> str:
        """A fresh admin dev token for the page, so a long-running server's page never goes
        stale and the page reads the whole tenant."""
        token = issue_token(settings, settings.dev_tenant, "graphiql", roles=["admin"])
        return f"Bearer {token}"

    prefill = settings.dev and settings.graphiql_enabled and settings.jwt_secret is not None
    limits = settings.limits
    cursors = CursorCodec(settings.cursor_key())
    path = settings.trusted_documents
    documents = persisted.Documents(manifest.load(path) if path is not None else None)
    observability = Observability(settings, tracer_provider)
    served = observability.store(store)
    schema = build_schema(limits, settings.executor)
    verifier = Verifier(settings)
    budget, shared = budgets(settings)
    places = None if shared is None else shared.places
    graphql = GraphQLEndpoint(
        schema,
        store=served,
        verifier=verifier,
        cursors=cursors,
        limits=limits,
        budget=budget,
        dev=settings.dev,
        batching=settings.batching,
        graphiql=settings.graphiql_enabled,
        graphiql_authorization=graphiql_authorization if prefill else None,
        documents=documents,
        get_max_age=settings.get_max_age,
    )

    async def healthz(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(_request: Request) -> Response:
        try:
            await store.get(Get(key=_PROBE_KEY))
        except (StoreError, OSError) as exc:
            return JSONResponse({"status": "unavailable", "reason": type(exc).__name__}, 503)
        return JSONResponse({"status": "ready"})

    if stream is None and own_stream:
        stream = _stream_of(store)
    hub, elected = _hub(settings, store, stream, shared)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        tune_for_serving(settings.gc_young_threshold)
        await _resume_cleanups(Session(served, cursors))
        if shared is not None:
            shared.start()
        try:
            async with _running(hub, elected), observability.running(store):
                yield
        finally:
            await cleanup.stop()
            if shared is not None:
                await shared.close()
            if close_store:
                await store.close()

    observed = observability.endpoint(graphql)
    routes: list[BaseRoute] = [
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route(GRAPHQL_PATH, observed),
        *observability.routes(),
    ]
    if hub is not None:
        realtime = _realtime(settings, schema, served, verifier, cursors, hub, budget, places)
        routes.append(WebSocketRoute(GRAPHQL_PATH, realtime))
    if settings.graphiql_enabled:
        routes.append(Mount(graphiql.ASSETS_PATH, graphiql.assets()))
    return App(observed, routes=routes, lifespan=lifespan)

"""Fixtures for subscription tests: the app over an embedded store whose writes reach an
in-memory change stream, an HTTP client and WebSocket sessions speaking
graphql-transport-ws.

The app is `keygraph serve`'s over `generated` and `server.extension`, with the settings'
init timeout, poll interval and subscriptions a connection, a tenant and a worker."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport
from starlette.applications import Starlette
from starlette.types import ASGIApp

from keygraph.serve import create_app as serve_app
from keygraph.serve.package import extension_at, served
from keygraph.serve.subscription_settings import SubscriptionSettings
from keygraph.store import Store
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.streams import ChangeStream
from server.auth.tokens import issue_token
from server.settings import Settings
from tests.server.conftest import SECRET
from tests.server.realtime.capturing_store import CapturingStore
from tests.server.realtime.memory_stream import MemoryStream

PROTOCOL = "graphql-transport-ws"
WAIT = 5.0


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path,
        jwt_secret=SECRET,
        ws_init_timeout=0.5,
        stream_poll_interval=0.01,
        max_subscriptions_per_connection=3,
        max_subscriptions_per_tenant=5,
        max_subscriptions_per_worker=7,
    ).resolved()


@pytest.fixture
def stream() -> MemoryStream:
    return MemoryStream()


def spec_app(
    settings: Settings, store: Store, stream: ChangeStream | None = None, **options: Any
) -> Starlette:
    """`keygraph serve`'s app on `store`, following `stream` (by default the store's own),
    with the settings' realtime limits where it has them (subscriptions a connection, a
    tenant and a worker; its connections are limited per tenant alone) and Served's other
    `options` (a budget, the connections a tenant holds)."""
    extension = extension_at("server.extension", "generated")
    assert settings.jwt_secret is not None
    served_app = served(
        "generated",
        store,
        settings.jwt_secret,
        [extension],
        stream=stream,
        poll=settings.poll_interval,
        init_timeout=settings.ws_init_timeout,
        max_subscriptions=settings.max_subscriptions_per_connection,
        subscriptions=SubscriptionSettings(
            settings.max_subscriptions_per_tenant, settings.max_subscriptions_per_worker
        ),
        **options,
    )
    return serve_app(served_app)


@pytest.fixture
async def app(
    settings: Settings, store: EmbeddedStore, stream: MemoryStream
) -> AsyncIterator[Starlette]:
    """The app, started, on the store and the in-memory stream."""
    built = spec_app(settings, cast(Store, CapturingStore(store, stream)), stream)
    async with built.router.lifespan_context(built):
        yield built


@pytest.fixture
async def client(app: ASGIApp) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://keygraph.test") as c:
        yield c


Open = Callable[..., Awaitable[AsyncWebSocketSession]]
"""Opens a WebSocket session; with a `token`, initialised and acknowledged."""
Sockets = Callable[[], contextlib.AbstractAsyncContextManager[Open]]
Connect = Callable[..., contextlib.AbstractAsyncContextManager[AsyncWebSocketSession]]


@pytest.fixture
def sockets(app: ASGIApp) -> Sockets:
    """Opens WebSocket sessions over one transport, whose task group lives in the test's own
    task (as it must), all closed at the end of the block."""
    return sessions(app)


def sessions(app: ASGIApp) -> Sockets:
    """`sockets` of any ASGI app (a session may ask for another `path`)."""

    @contextlib.asynccontextmanager
    async def block() -> AsyncIterator[Open]:
        async with (
            ASGIWebSocketTransport(app=app) as transport,
            httpx.AsyncClient(transport=transport, base_url="http://keygraph.test") as client,
            contextlib.AsyncExitStack() as stack,
        ):

            async def open_session(
                token: str | None = None,
                subprotocols: list[str] | None = None,
                path: str = "/graphql",
            ) -> AsyncWebSocketSession:
                ws: AsyncWebSocketSession = await stack.enter_async_context(
                    aconnect_ws(
                        f"http://keygraph.test{path}",
                        client,
                        subprotocols=[PROTOCOL] if subprotocols is None else subprotocols,
                        keepalive_ping_interval_seconds=None,
                    )
                )
                if token is not None:
                    await ws.send_json({"type": "connection_init", "payload": bearer(token)})
                    assert (await receive(ws)) == {"type": "connection_ack"}
                return ws

            yield open_session

    return block


@pytest.fixture
def connect(sockets: Sockets) -> Connect:
    """One WebSocket session; with a `token`, initialised and acknowledged."""

    @contextlib.asynccontextmanager
    async def session(
        token: str | None = None, subprotocols: list[str] | None = None
    ) -> AsyncIterator[AsyncWebSocketSession]:
        async with sockets() as open_session:
            yield await open_session(token, subprotocols)

    return session


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def receive(ws: AsyncWebSocketSession, wait: float = WAIT) -> dict[str, Any]:
    message: dict[str, Any] = await ws.receive_json(timeout=wait)
    return message


async def subscribe(
    ws: AsyncWebSocketSession, op_id: str, query: str, variables: dict[str, Any] | None = None
) -> None:
    payload = {"query": query, "variables": variables or {}}
    await ws.send_json({"type": "subscribe", "id": op_id, "payload": payload})


async def settle() -> None:
    """Lets the server start what it was just sent (the subscription's feed) and the stream
    reader read what was written (a subscription gets the changes read after it starts)."""
    for _ in range(20):
        await asyncio.sleep(0.005)


@pytest.fixture
def member_token(settings: Settings) -> Callable[[str], str]:
    """A member of acme whose subject is a user's local id."""

    def token(subject: str) -> str:
        return issue_token(settings, "acme", subject, roles=["member"])

    return token

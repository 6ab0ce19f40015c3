"""Sockets speaking graphql-transport-ws to an app in this process, as the subscription
tests open them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
from httpx_ws import AsyncWebSocketSession, aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport

from keygraph.tokens import issue

Open = Callable[..., Awaitable[AsyncWebSocketSession]]
"""`await open(tenant, role, init, subject)`: a socket, initialised unless `init` is false."""


@contextlib.asynccontextmanager
async def sockets(app: Any, secret: str) -> AsyncIterator[Open]:
    """Opens sockets to `app` on one transport, each initialised with a token of its caller
    (signed with `secret`) unless asked not to, and closed when the block ends."""
    async with (
        ASGIWebSocketTransport(app=app) as transport,
        httpx.AsyncClient(transport=transport, base_url="http://serve.test") as client,
        contextlib.AsyncExitStack() as stack,
    ):

        async def open_socket(
            tenant: str = "acme", role: str = "member", init: bool = True, subject: str = "m1"
        ) -> AsyncWebSocketSession:
            ws: AsyncWebSocketSession = await stack.enter_async_context(
                aconnect_ws(
                    "http://serve.test/graphql",
                    client,
                    subprotocols=["graphql-transport-ws"],
                    keepalive_ping_interval_seconds=None,
                )
            )
            if init:
                token = issue(secret, tenant, subject, roles=[role])
                init_payload = {"authorization": f"Bearer {token}"}
                await ws.send_json({"type": "connection_init", "payload": init_payload})
                assert (await ws.receive_json(timeout=15))["type"] == "connection_ack"
            return ws

        yield open_socket

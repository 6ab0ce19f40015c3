"""Subscriptions from a `serve` process over a real socket: a server killed with SIGKILL
loses none of a resuming client's events (they are in the store's change log, and the
client's cursor says where it was)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws

from tests.server.realtime.conftest import PROTOCOL, bearer, receive, subscribe
from tests.server.realtime.test_fields import ORDERS
from tests.server.test_serve import Server

CREATE_USER = 'mutation { createUser(input: {email: "bob@acme.test", name: "Bob"}) { id } }'


def create_order(server: Server, user: str, sku: str) -> None:
    line = f'{{sku: "{sku}", name: "x", quantity: 1, unitPriceCents: 100}}'
    body = server.query(
        f'mutation {{ createOrder(input: {{userId: "{user}", currency: "EUR", '
        f"items: [{line}]}}) {{ id }} }}"
    )
    assert "errors" not in body, body


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[], Server]]:
    servers: list[Server] = []

    def make() -> Server:
        server = Server(tmp_path / "data")
        servers.append(server)
        server.wait_healthy()
        return server

    yield make
    for server in servers:
        server.stop()


async def _session(client: httpx.AsyncClient, server: Server) -> Any:
    return aconnect_ws(
        f"{server.url}/graphql",
        client,
        subprotocols=[PROTOCOL],
        keepalive_ping_interval_seconds=None,
    )


async def _skus(ws: AsyncWebSocketSession, count: int) -> list[tuple[str, str]]:
    found = []
    for _ in range(count):
        message = await receive(ws, 15)
        assert message["type"] == "next", message
        change = message["payload"]["data"]["orderChanged"]
        found.append((change["order"]["items"][0]["sku"], change["cursor"]))
    return found


async def test_a_resume_after_sigkill_loses_nothing(serve: Callable[[], Server]) -> None:
    server = serve()
    created = server.query(CREATE_USER)
    user = created["data"]["createUser"]["id"]  # type: ignore[index]
    async with httpx.AsyncClient() as client:
        async with await _session(client, server) as ws:
            await ws.send_json({"type": "connection_init", "payload": bearer(server.token)})
            assert (await receive(ws, 15))["type"] == "connection_ack"
            await subscribe(ws, "1", ORDERS, {"u": user})
            await asyncio.sleep(0.5)  # the subscription has started
            create_order(server, user, "A")
            ((sku, cursor),) = await _skus(ws, 1)
            assert sku == "A"
            create_order(server, user, "B")  # the client goes before it sees B
        server.stop()  # SIGKILL
        restarted = serve()
        create_order(restarted, user, "C")
        async with await _session(client, restarted) as ws:
            await ws.send_json({"type": "connection_init", "payload": bearer(restarted.token)})
            assert (await receive(ws, 15))["type"] == "connection_ack"
            await subscribe(ws, "1", ORDERS, {"u": user, "after": cursor})
            assert [sku for sku, _ in await _skus(ws, 2)] == ["B", "C"]
            await asyncio.sleep(0.5)  # the reader has read B and C
            create_order(restarted, user, "D")
            assert [sku for sku, _ in await _skus(ws, 1)] == ["D"]


async def test_a_message_over_the_body_limit_closes_the_connection(
    serve: Callable[[], Server],
) -> None:
    """A WebSocket message is bounded as a request body is (KEYGRAPH_MAX_BODY_BYTES)."""
    server = serve()
    big = '{"type": "connection_init", "payload": {"x": "' + "a" * (1 << 20) + '"}}'
    async with httpx.AsyncClient() as client, await _session(client, server) as ws:
        await ws.send_text(big)
        with pytest.raises(WebSocketDisconnect) as closed:
            await receive(ws, 15)
    assert closed.value.code == 1009  # message too big

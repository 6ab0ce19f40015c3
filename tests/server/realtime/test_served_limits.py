"""The WebSocket connection limits of a `serve` process over real sockets, the compiled
API's (keygraph/serve/sockets.py): a tenant's connections past
KEYGRAPH_MAX_WS_CONNECTIONS_PER_TENANT are closed 4429 as they init, while those it holds
subscribe and get their events; a place given back is taken again; a message that is not
the protocol's closes its connection 4400. No close logs a traceback."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws

from tests.server.realtime.conftest import PROTOCOL, bearer, receive, subscribe
from tests.server.realtime.test_served import STARTED
from tests.server.serving.test_serve import Server
from tests.waiting import until

CREATE_USER = 'mutation { createUser(input: {email: "bob@acme.test", name: "Bob"}) { id version } }'
RENAME = (
    'mutation {{ updateUser(input: {{id: "{id}", expectedVersion: {version}, name: "Robert"}}) '
    "{{ id }} }}"
)
USER = "subscription($id: ID!) { userChanged(id: $id) { change user { name } } }"
PLACES = 3
"""Connections one tenant may hold in the worker."""


async def closed_with(ws: AsyncWebSocketSession, code: int) -> None:
    with pytest.raises(WebSocketDisconnect) as caught:
        await receive(ws, 15)
    assert caught.value.code == code


async def test_a_tenants_connections_are_bounded_over_real_sockets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEYGRAPH_MAX_WS_CONNECTIONS_PER_TENANT", str(PLACES))
    monkeypatch.setenv("KEYGRAPH_WS_INIT_TIMEOUT", "120")  # none times out on a slow machine
    log = tmp_path / "serve.log"
    server = Server(tmp_path / "data", log=log)
    try:
        await asyncio.to_thread(server.wait_healthy)
        created = await asyncio.to_thread(server.query, CREATE_USER)
        bob = created["data"]["createUser"]  # type: ignore[index]
        async with httpx.AsyncClient() as client, contextlib.AsyncExitStack() as stack:

            async def open_session() -> AsyncWebSocketSession:
                ws: AsyncWebSocketSession = await stack.enter_async_context(
                    aconnect_ws(
                        f"{server.url}/graphql",
                        client,
                        subprotocols=[PROTOCOL],
                        keepalive_ping_interval_seconds=None,
                    )
                )
                await ws.send_json({"type": "connection_init", "payload": bearer(server.token)})
                return ws

            held = [await open_session() for _ in range(PLACES)]
            for ws in held:
                assert (await receive(ws, 15))["type"] == "connection_ack"
            await closed_with(await open_session(), 4429)
            for n, ws in enumerate(held):
                await subscribe(ws, str(n), USER, {"id": bob["id"]})
            await until(lambda: server.logged(STARTED) == PLACES, "the subscriptions to start")
            rename = RENAME.format(id=bob["id"], version=bob["version"])
            assert "errors" not in await asyncio.to_thread(server.query, rename)
            for ws in held:
                message = await receive(ws, 15)
                assert message["payload"]["data"]["userChanged"]["user"] == {"name": "Robert"}
            await held[0].send_bytes(b"\x00")
            await closed_with(held[0], 4400)
            again = await open_session()  # the place the closed one gave back
            assert (await receive(again, 15))["type"] == "connection_ack"
    finally:
        server.stop()
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert not any("exception" in line for line in lines)

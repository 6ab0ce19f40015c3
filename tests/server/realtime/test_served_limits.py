"""The WebSocket connection limits of a `serve` process over real sockets: a flood of
connections that never init is closed 1013 from its oldest while a client connects,
subscribes and gets its event; past the worker's limit a connection is closed 1013 at once;
each close logs a warning without a traceback."""

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


async def closed_with(ws: AsyncWebSocketSession, code: int) -> None:
    with pytest.raises(WebSocketDisconnect) as caught:
        await receive(ws, 15)
    assert caught.value.code == code


async def test_a_flood_and_a_full_worker_over_real_sockets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEYGRAPH_MAX_WS_CONNECTIONS", "10")
    monkeypatch.setenv("KEYGRAPH_MAX_WS_AWAITING_INIT", "4")
    monkeypatch.setenv("KEYGRAPH_WS_INIT_TIMEOUT", "120")  # none times out on a slow machine
    log = tmp_path / "serve.log"
    server = Server(tmp_path / "data", log=log)
    try:
        await asyncio.to_thread(server.wait_healthy)
        created = await asyncio.to_thread(server.query, CREATE_USER)
        bob = created["data"]["createUser"]  # type: ignore[index]
        async with httpx.AsyncClient() as client, contextlib.AsyncExitStack() as stack:

            async def open_session(init: bool) -> AsyncWebSocketSession:
                ws: AsyncWebSocketSession = await stack.enter_async_context(
                    aconnect_ws(
                        f"{server.url}/graphql",
                        client,
                        subprotocols=[PROTOCOL],
                        keepalive_ping_interval_seconds=None,
                    )
                )
                if init:
                    await ws.send_json({"type": "connection_init", "payload": bearer(server.token)})
                    assert (await receive(ws, 15))["type"] == "connection_ack"
                return ws

            flood = [await open_session(False) for _ in range(12)]
            ws = await open_session(True)  # evicts one more of the flood
            await subscribe(ws, "1", USER, {"id": bob["id"]})
            await until(lambda: server.logged(STARTED) == 1, "the subscription to start")
            rename = RENAME.format(id=bob["id"], version=bob["version"])
            assert "errors" not in await asyncio.to_thread(server.query, rename)
            message = await receive(ws, 15)
            assert message["payload"]["data"]["userChanged"]["user"] == {"name": "Robert"}
            for evicted in flood[:9]:
                await closed_with(evicted, 1013)
            others = [await open_session(True) for _ in range(9)]  # the last 3 evict the flood
            for evicted in flood[9:]:
                await closed_with(evicted, 1013)
            refused = await open_session(False)
            await closed_with(refused, 1013)
            await others[0].send_bytes(b"\x00")
            await closed_with(others[0], 4400)
    finally:
        server.stop()
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    closes = [line for line in lines if line["message"].startswith("websocket connection")]
    assert len(closes) == 13  # 12 evicted, 1 refused
    assert {line["level"] for line in closes} == {"warning"}
    assert not any("exception" in line for line in lines)

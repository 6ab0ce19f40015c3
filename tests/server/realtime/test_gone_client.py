"""A client gone in the middle of a send: the send that finds it gone raises
WebSocketDisconnect, which ends its subscription quietly, and every later send of the
connection's other subscriptions sends nothing rather than raising from Starlette (which
uvicorn would log as an exception in the application). The frame fuzz found it."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, cast

import pytest
from starlette.websockets import WebSocket, WebSocketDisconnect

from server.realtime.connection import Connection


async def test_sends_after_the_client_is_gone_send_nothing() -> None:
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "websocket.send":
            raise OSError("the client is gone")
        sent.append(message)

    websocket = WebSocket({"type": "websocket", "path": "/graphql", "headers": []}, receive, send)
    await websocket.accept()
    connection = Connection(cast(Any, None), websocket)
    with pytest.raises(WebSocketDisconnect):
        await connection._send({"type": "next", "id": "a", "payload": {}})
    await connection._send({"type": "error", "id": "b", "payload": []})  # nothing, no raise
    await connection._send({"type": "complete", "id": "c"})
    assert sent == [{"type": "websocket.accept", "subprotocol": None, "headers": []}]

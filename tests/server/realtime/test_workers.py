"""`serve --workers 2` on both stores: subscribers on both workers get a write's
event, and only one process (the supervisor's relay) reads the store's change stream."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from pathlib import Path

import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, aconnect_ws

from tests.server.realtime.conftest import PROTOCOL, bearer, receive, subscribe
from tests.server.realtime.test_fields import ORDERS
from tests.server.realtime.test_served import CREATE_USER, STARTED, create_order
from tests.server.serving.test_serve import Server
from tests.sockets_held import connections
from tests.waiting import until

MAX_CONNECTIONS = 200
"""Connections opened, at most, until each worker holds one: a worker still starting, or
busy on a loaded machine, may let the other take many in a row."""


def _stream_readers(log: Path) -> list[str]:
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    return [e["message"] for e in lines if e["message"].startswith("reading the change stream")]


@pytest.mark.parametrize(
    "store", ["embedded", pytest.param("dynamodb-local", marks=pytest.mark.dynamodb_local)]
)
async def test_both_workers_deliver_and_one_process_reads(tmp_path: Path, store: str) -> None:
    log = tmp_path / "serve.log"
    server = Server(tmp_path / "data", "--store", store, "--workers", "2", log=log)
    try:
        await asyncio.to_thread(server.wait_healthy)
        workers = server.children("multiprocessing.spawn")
        assert len(workers) == 2
        user = server.query(CREATE_USER)["data"]["createUser"]["id"]  # type: ignore[index]
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(httpx.AsyncClient())
            sessions: list[AsyncWebSocketSession] = []
            while len(sessions) < MAX_CONNECTIONS and not all(
                connections(pid, server.port) for pid in workers
            ):  # until both workers hold a subscriber's connection
                ws: AsyncWebSocketSession = await stack.enter_async_context(
                    aconnect_ws(
                        f"{server.url}/graphql",
                        client,
                        subprotocols=[PROTOCOL],
                        keepalive_ping_interval_seconds=None,
                    )
                )
                await ws.send_json({"type": "connection_init", "payload": bearer(server.token)})
                assert (await receive(ws, 15))["type"] == "connection_ack"
                await subscribe(ws, "1", ORDERS, {"u": user})
                sessions.append(ws)
            assert [connections(pid, server.port) > 0 for pid in workers] == [True, True]
            started = len(sessions)
            await until(lambda: server.logged(STARTED) == started, "the subscriptions to start")
            await asyncio.to_thread(create_order, server, user, "A")
            for ws in sessions:
                message = await receive(ws, 15)
                assert message["type"] == "next", message
                assert message["payload"]["data"]["orderChanged"]["order"]["items"][0]["sku"] == "A"
    finally:
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=60)
    assert _stream_readers(log) == ["reading the change stream of the table keygraph"]

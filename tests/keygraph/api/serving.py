"""`keygraph serve` as a user runs it: a child process of this checkout on a free port, with
no secret nor AWS settings from the test's environment but those it is given."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from httpx_ws import AsyncWebSocketSession, aconnect_ws

from keygraph.serve.secret import SECRET_ENV
from keygraph.stores.dynamodb.local import free_port
from tests.sockets_held import connections
from tests.waiting import answering

ROOT = Path(__file__).parents[3]


@dataclass(frozen=True)
class Serving:
    """A `keygraph serve` process that answers at `url`, on `port`."""

    url: str
    port: int
    process: subprocess.Popen[bytes]


@contextmanager
def keygraph_process(
    *argv: str | Path, cwd: Path, env: Mapping[str, str] | None = None
) -> Iterator[Serving]:
    """`keygraph serve *argv` run in `cwd` (its output in serve.log), once it answers;
    stopped afterwards if it still runs."""
    port = free_port()
    inherited = {
        k: v for k, v in os.environ.items() if k != SECRET_ENV and not k.startswith("AWS_")
    }
    environ = {**inherited, "PYTHONPATH": str(ROOT), **(env or {})}
    command = [sys.executable, "-m", "codegen", "serve", *map(str, argv), "--port", str(port)]
    with (cwd / "serve.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=cwd, env=environ, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        answering(f"{url}/healthz", lambda: process.poll() is None)
        yield Serving(url, port, process)
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(30)


@contextmanager
def keygraph_serve(
    *argv: str | Path, cwd: Path, env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """The URL of `keygraph serve *argv` run in `cwd`, once it answers; stopped afterwards."""
    with keygraph_process(*argv, cwd=cwd, env=env) as serving:
        yield serving.url


def unreported(body: dict[str, Any]) -> dict[str, Any]:
    """An answer's body without its `extensions`, which must report its cost."""
    assert "cost" in body["extensions"], body
    return {key: value for key, value in body.items() if key != "extensions"}


async def subscribed_on_each_worker(
    serving: Serving,
    workers: list[int],
    stack: AsyncExitStack,
    token: str,
    query: str,
    most: int = 200,
) -> list[AsyncWebSocketSession]:
    """Subscribers to `query` as the bearer of `token`, opened (at most `most`, closed with
    `stack`) until each of the `workers` holds one: the kernel hands a connection to any."""
    client = await stack.enter_async_context(httpx.AsyncClient(timeout=30))
    sessions: list[AsyncWebSocketSession] = []
    while len(sessions) < most and not all(connections(pid, serving.port) for pid in workers):
        ws: AsyncWebSocketSession = await stack.enter_async_context(
            aconnect_ws(
                f"{serving.url}/graphql",
                client,
                subprotocols=["graphql-transport-ws"],
                keepalive_ping_interval_seconds=None,
            )
        )
        init = {"authorization": f"Bearer {token}"}
        await ws.send_json({"type": "connection_init", "payload": init})
        assert (await ws.receive_json(timeout=30))["type"] == "connection_ack"
        await ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": query}})
        sessions.append(ws)
    assert all(connections(pid, serving.port) for pid in workers)
    return sessions

"""`python -m server serve` as a process: stop signals drain requests in flight, worker
processes share the port, and neither a DynamoDB Local child nor a worker outlives the
server, however it ends (SIGTERM, SIGINT, SIGKILL)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from keygraph.stores.dynamodb.local import LocalUnavailable, find_jar, find_java, free_port
from server.auth.tokens import issue_token
from server.settings import Settings
from tests.sockets_held import children, gone
from tests.waiting import answering, wait_for

ROOT = Path(__file__).parents[3]
SECRET = "serve-test-secret-" + "s" * 32
METRICS_TOKEN = "serve-test-metrics-" + "m" * 16
STOPS = [signal.SIGTERM, signal.SIGINT]


class Server:
    """A `serve` process on a free port with its own data directory."""

    def __init__(self, data: Path, *flags: str, log: Path | None = None) -> None:
        """`log`, when given, takes the server's standard error (its JSON log lines)."""
        self.log = log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "KEYGRAPH_JWT_SECRET": SECRET}
        command = [sys.executable, "-m", "server", "serve", "--port", str(self.port)]
        with contextlib.ExitStack() as files:
            stderr = subprocess.DEVNULL if log is None else files.enter_context(log.open("wb"))
            self.process = subprocess.Popen(
                [*command, "--data", str(data), *flags],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        self.token = issue_token(
            Settings(data_dir=data, jwt_secret=SECRET), "acme", roles=["admin"]
        )

    def wait_healthy(self, timeout: float = 180) -> None:
        answering(f"{self.url}/readyz", lambda: self.process.poll() is None, timeout)

    def logged(self, message: str) -> int:
        """How many of the server's log lines (its `log`) say `message`."""
        assert self.log is not None, "the server was started without a log"
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return sum(
            json.loads(line).get("message") == message
            for line in text.splitlines()
            if line.startswith("{") and line.endswith("}")
        )

    def query(self, query: str, variables: dict[str, object] | None = None) -> dict[str, object]:
        request = urllib.request.Request(
            f"{self.url}/graphql",
            data=json.dumps({"query": query, "variables": variables or {}}).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            body: dict[str, object] = json.loads(response.read())
            return body

    def children(self, match: str) -> list[int]:
        """Pids of this server's child processes whose command line holds `match`."""
        return children(self.process.pid, match)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def make(*flags: str) -> Server:
        server = Server(tmp_path / "data", *flags)
        servers.append(server)
        server.wait_healthy()
        return server

    yield make
    for server in servers:
        server.stop()


def _all_gone(pids: list[int]) -> None:
    wait_for(lambda: all(gone(pid) for pid in pids), f"processes {pids} to exit", 30)


def _in_flight(server: Server) -> float:
    """The server's keygraph_requests_in_flight, read from its /metrics."""
    request = urllib.request.Request(
        f"{server.url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    (line,) = [n for n in text.splitlines() if n.startswith("keygraph_requests_in_flight ")]
    return float(line.split()[1])


def _needs_dynamodb_local() -> None:
    try:
        find_jar()
        find_java()
    except LocalUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"DynamoDB Local is required in CI: {exc}")
        pytest.skip(str(exc))


@pytest.mark.parametrize("stop", STOPS, ids=lambda s: s.name)
def test_a_stop_signal_lets_the_request_in_flight_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop: signal.Signals
) -> None:
    monkeypatch.setenv("KEYGRAPH_METRICS_TOKEN", METRICS_TOKEN)
    server = Server(tmp_path / "data", log=tmp_path / "serve.log")
    try:
        server.wait_healthy()
        _drain(server, stop)
    finally:
        server.stop()


def _drain(server: Server, stop: signal.Signals) -> None:
    body = json.dumps({"query": "{ viewer { tenant } }"}).encode()
    head = (
        f"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {server.token}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port)) as connection:
        connection.sendall(head + body[:10])  # the request has begun, its body is not all here
        wait_for(lambda: _in_flight(server) == 1, "the request to be in flight")
        server.process.send_signal(stop)
        wait_for(lambda: server.logged("Shutting down") == 1, "the server to begin its stop")
        assert server.process.poll() is None  # still draining
        connection.sendall(body[10:])
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200")
    assert b'"tenant":"acme"' in answer
    assert server.process.wait(timeout=30) == 0


def test_workers_share_the_port_and_stop_with_the_server(start: Callable[..., Server]) -> None:
    server = start("--workers", "2")
    workers = server.children("multiprocessing.spawn")
    assert len(workers) == 2
    for _ in range(6):
        assert server.query("{ viewer { tenant } }")["data"] == {"viewer": {"tenant": "acme"}}
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=60) == 0
    _all_gone(workers)


def test_workers_never_outlive_a_killed_server(start: Callable[..., Server]) -> None:
    server = start("--workers", "2")
    # the workers, and multiprocessing's resource tracker
    spawned = server.children("multiprocessing")
    assert len(spawned) == 3
    server.process.kill()
    _all_gone(spawned)


@pytest.mark.dynamodb_local
@pytest.mark.parametrize("stop", [*STOPS, signal.SIGKILL], ids=lambda s: s.name)
def test_dynamodb_local_never_outlives_the_server(
    start: Callable[..., Server], stop: signal.Signals
) -> None:
    _needs_dynamodb_local()
    server = start("--store", "dynamodb-local")
    java = server.children("DynamoDBLocal.jar")
    assert len(java) == 1
    assert server.query("{ viewer { tenant } }")["data"] == {"viewer": {"tenant": "acme"}}
    server.process.send_signal(stop)
    server.process.wait(timeout=60)
    _all_gone(java)


@pytest.mark.dynamodb_local
def test_workers_on_dynamodb_local(start: Callable[..., Server]) -> None:
    _needs_dynamodb_local()
    server = start("--store", "dynamodb-local", "--workers", "2")
    assert len(server.children("multiprocessing.spawn")) == 2
    created = server.query('mutation { createGroup(input: {name: "g"}) { id } }')
    group_id = created["data"]["createGroup"]["id"]  # type: ignore[index]
    for _ in range(4):  # whichever worker answers reads what the other wrote
        found = server.query(f'{{ group(id: "{group_id}") {{ name }} }}')
        assert found["data"] == {"group": {"name": "g"}}
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=60) == 0


def test_idle_connections_outlast_a_load_balancers(start: Callable[..., Server]) -> None:
    server = start()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        for pause in (0, 6):  # past uvicorn's own default of 5 s
            time.sleep(pause)
            connection.request("GET", "/healthz")
            response = connection.getresponse()
            assert (response.status, response.read()) == (200, b'{"status":"ok"}')
    finally:
        connection.close()

"""`keygraph serve --workers 2` as a process on the embedded store: both workers answer on
one port, a killed worker is replaced, a subscriber on each worker gets a write's event,
a stop signal lets the request in flight finish and exits 0 with every worker gone; and a
tenant's budget is one for both workers with --redis-url, each worker's own share without
it or while Redis cannot be reached."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from httpx_ws import AsyncWebSocketSession

from codegen.cli import main
from generated.models.shop import Shop
from generated.table import TABLE
from keygraph.plan import Put
from keygraph.serve.cli import EXIT_BAD_INPUT
from keygraph.stores.dynamodb.local import free_port
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.tokens import issue
from server.seed.tenant import SeedSizes, seed
from tests.keygraph.api.serving import Serving, keygraph_process, subscribed_on_each_worker
from tests.redis_server import RedisServer
from tests.sockets_held import children, gone, holder, listening
from tests.waiting import wait_for

SECRET = "serve-workers-" + "w" * 32
ENV = {"KEYGRAPH_JWT_SECRET": SECRET}
WORKER = "multiprocessing.spawn"
TOKEN = issue(SECRET, "acme", "u1", roles=["admin"])
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
VIEWER = json.dumps({"query": "{ users(first: 1) { edges { cursor } } }"}).encode()
COSTLY = "{ users(first: 100) { edges { node { orders(first: 100) { edges { node { id } } } } } } }"
"""An operation of cost 10,100: a budget of 25,000 admits two, a worker's half of it one,
when its answer holds nearly all it may (what it does not use is given back: `_seeded`)."""
FULL = SeedSizes(users=100, orders=12_000, groups=0, org_nodes=0, org_depth=0, shops=0)
"""About 120 orders a user: COSTLY's answer holds nearly 10,100 objects."""
WATCH = 'subscription { shopChanged(shopId: "s1") { shop { name } } }'
SHOP = Shop(
    shop_id="s1",
    name="Kiosk",
    lat=0,
    lng=0,
    geohash="s00000000",
    geo_cell="s00",
    created_at=datetime(2026, 1, 1, tzinfo=UTC),
)
WRITES = 20
HEARD = 2.0
"""Seconds a subscriber waits for a write's event before the write is made again."""
BUDGET = ("--tenant-budget", "25000", "--tenant-refill", "0.001")
CONNECTIONS = 200
"""Connections opened, at most, until each worker holds one: a worker still starting, or
busy on a loaded machine, may let the other take many in a row."""


def _serve(tmp_path: Path, *flags: str) -> contextlib.AbstractContextManager[Serving]:
    db = tmp_path / "keygraph.sqlite3"
    argv: tuple[str | Path, ...] = ("--package", "generated", "--db", db, "--workers", "2")
    return keygraph_process(*argv, *flags, cwd=tmp_path, env=ENV)


def _workers(serving: Serving) -> list[int]:
    found: list[int] = []

    def two() -> bool:
        found[:] = children(serving.process.pid, WORKER)
        return len(found) == 2

    wait_for(two, "two workers", 60)
    return found


@contextlib.contextmanager
def _connection(serving: Serving) -> Iterator[http.client.HTTPConnection]:
    connection = http.client.HTTPConnection("127.0.0.1", serving.port, timeout=30)
    try:
        connection.connect()
        yield connection
    finally:
        connection.close()


def _post(connection: http.client.HTTPConnection, body: bytes) -> tuple[int, dict[str, Any]]:
    connection.request("POST", "/graphql", body, HEADERS)
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def _on_each_worker(
    serving: Serving, workers: list[int], stack: contextlib.ExitStack
) -> dict[int, http.client.HTTPConnection]:
    """An open connection to each worker, each having answered a query."""
    held: dict[int, http.client.HTTPConnection] = {}
    for _ in range(CONNECTIONS):
        connection = stack.enter_context(_connection(serving))
        assert _post(connection, VIEWER)[0] == 200
        assert connection.sock is not None
        pid = holder(workers, serving.port, connection.sock.getsockname()[1])
        assert pid is not None, "a connection no worker holds"
        held.setdefault(pid, connection)
        if len(held) == len(workers):
            return held
    raise AssertionError(f"only {sorted(held)} of {workers} answered {CONNECTIONS} connections")


def _accepted_by(serving: Serving, workers: list[int], client_port: int) -> int:
    """The worker that accepted the connection from `client_port`, once one has."""
    held: list[int] = []

    def accepted() -> bool:
        pid = holder(workers, serving.port, client_port)
        held[:] = [] if pid is None else [pid]
        return bool(held)

    wait_for(accepted, "a worker to accept the connection", 30)
    return held[0]


def _to_worker(
    serving: Serving, workers: list[int], pid: int, stack: contextlib.ExitStack
) -> http.client.HTTPConnection:
    """A new connection that the worker `pid` accepted, before any request on it."""
    for _ in range(CONNECTIONS):
        connection = stack.enter_context(_connection(serving))
        assert connection.sock is not None
        if _accepted_by(serving, workers, connection.sock.getsockname()[1]) == pid:
            return connection
    raise AssertionError(f"worker {pid} accepted none of {CONNECTIONS} connections")


def test_both_workers_answer_and_a_killed_one_is_replaced(tmp_path: Path) -> None:
    with _serve(tmp_path) as serving, contextlib.ExitStack() as stack:
        workers = _workers(serving)
        _on_each_worker(serving, workers, stack)
        killed, kept = workers
        os.kill(killed, signal.SIGKILL)
        replaced: list[int] = []

        def replacement() -> bool:
            replaced[:] = [p for p in children(serving.process.pid, WORKER) if p not in workers]
            return len(replaced) == 1 and gone(killed)

        wait_for(replacement, "the killed worker to be replaced", 60)
        assert serving.process.poll() is None
        _on_each_worker(serving, [kept, *replaced], stack)


def test_a_stop_signal_drains_the_request_in_flight_and_exits_0(tmp_path: Path) -> None:
    with _serve(tmp_path) as serving:
        workers = _workers(serving)
        head = (
            f"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Length: {len(VIEWER)}\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", serving.port), timeout=30) as connection:
            connection.sendall(head + VIEWER[:10])  # begun, its body not all here
            client_port = connection.getsockname()[1]
            wait_for(lambda: holder(workers, serving.port, client_port), "a worker to accept")
            worker = holder(workers, serving.port, client_port)
            assert worker is not None
            serving.process.send_signal(signal.SIGTERM)
            wait_for(lambda: not listening(worker, serving.port), "the worker to stop taking", 30)
            assert serving.process.poll() is None  # still draining
            connection.sendall(VIEWER[10:])
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer
        assert serving.process.wait(timeout=60) == 0
        wait_for(lambda: all(gone(pid) for pid in workers), "the workers to exit", 30)


async def test_a_subscriber_on_each_worker_gets_a_write(tmp_path: Path) -> None:
    with _serve(tmp_path) as serving:
        workers = _workers(serving)
        async with contextlib.AsyncExitStack() as stack:
            sessions = await subscribed_on_each_worker(serving, workers, stack, TOKEN, WATCH)
            await _write_until_each_hears(tmp_path, sessions)


async def _write_until_each_hears(tmp_path: Path, sessions: list[AsyncWebSocketSession]) -> None:
    """Writes the shop again (outside GraphQL: the workers read it from the change log)
    until every subscriber got an event of it: a subscription still starting when a write
    is made may miss that one, not the next."""
    store = EmbeddedStore(TABLE, path=tmp_path / "keygraph.sqlite3")
    waiting = list(sessions)
    try:
        for version in range(1, WRITES + 1):
            await store.put(Put(SHOP.model_copy(update={"version": version}).to_item("acme")))
            still = []
            for ws in waiting:
                try:
                    message = await ws.receive_json(timeout=HEARD)
                except TimeoutError:
                    still.append(ws)
                    continue
                assert message["type"] == "next", message
                assert message["payload"]["data"]["shopChanged"]["shop"]["name"] == "Kiosk"
            waiting = still
            if not waiting:
                return
    finally:
        await store.close()
    raise AssertionError(f"{len(waiting)} of {len(sessions)} subscribers heard no write")


def _spend(connection: http.client.HTTPConnection) -> int:
    """Sends the costly operation until the budget refuses it; how many it admitted."""
    body = json.dumps({"query": COSTLY}).encode()
    for admitted in range(10):
        status, answer = _post(connection, body)
        if status == 429:
            assert answer["errors"][0]["extensions"]["code"] == "THROTTLED"
            return admitted
        assert status == 200, answer
    raise AssertionError("the budget never refused")


async def _seeded(tmp_path: Path) -> None:
    """The database `_serve` serves, holding what COSTLY reads in full."""
    store = EmbeddedStore(TABLE, path=tmp_path / "keygraph.sqlite3")
    try:
        await seed(store, "acme", FULL, progress=False)
    finally:
        await store.close()


async def test_with_redis_a_tenants_budget_spent_on_one_worker_is_spent_on_the_other(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    await _seeded(tmp_path)
    flags = (*BUDGET, "--redis-url", redis_server.url)
    with _serve(tmp_path, *flags) as serving, contextlib.ExitStack() as stack:
        workers = _workers(serving)
        (_, first), (other, _) = _on_each_worker(serving, workers, stack).items()
        assert _spend(first) == 2  # the whole budget, not a worker's half
        # a new connection to the other worker: one held idle while the first spent may have
        # outlived the server's keep-alive on a loaded machine
        second = _to_worker(serving, workers, other, stack)
        status, answer = _post(second, json.dumps({"query": COSTLY}).encode())
        assert status == 429, answer
        assert answer["errors"][0]["extensions"]["code"] == "THROTTLED"


@pytest.mark.parametrize("redis", ["none", "unreachable"])
async def test_without_redis_each_worker_holds_its_share(tmp_path: Path, redis: str) -> None:
    await _seeded(tmp_path)
    flags = () if redis == "none" else ("--redis-url", f"redis://127.0.0.1:{free_port()}/0")
    with _serve(tmp_path, *BUDGET, *flags) as serving, contextlib.ExitStack() as stack:
        first, second = _on_each_worker(serving, _workers(serving), stack).values()
        assert _spend(first) == 1  # half the budget
        assert _spend(second) == 1


@pytest.mark.parametrize(
    ("flags", "environ", "said"),
    [
        (["--workers", "0"], {}, "workers must be at least 1, not 0"),
        (["--workers", "-3"], {}, "workers must be at least 1, not -3"),
        ([], {"KEYGRAPH_WORKERS": "two"}, "KEYGRAPH_WORKERS must be a whole number, not 'two'"),
        ([], {"KEYGRAPH_WORKERS": "0"}, "workers must be at least 1, not 0"),
        (["--redis-url", "nowhere"], {}, "Redis URL must specify one of the following schemes"),
    ],
)
def test_workers_and_a_redis_url_that_cannot_work_are_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    environ: dict[str, str],
    said: str,
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    argv = ["serve", "--package", "generated", "--db", str(tmp_path / "k.sqlite3"), *flags]
    assert main(argv) == EXIT_BAD_INPUT
    assert said in capsys.readouterr().err

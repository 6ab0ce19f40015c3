"""`keygraph serve`'s JSON request log (keygraph/serve/request_log.py), in process on this
repository's spec and its seed data: one line per request with its id, tenant, operation,
status, code, store calls and waves, capacity units and duration, for a success, a
refusal, a body that is no request and a request cut at its deadline; the caller's
X-Request-Id answered and logged when it is a plain one, a new one for a huge, non-ASCII or
odd one, and an operation's name logged cut short; a bug logged with its traceback and the
request's id, which its answer quotes; `keygraph serve` as a user runs it writes its lines
on stderr, and no access log."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from generated.table import TABLE
from keygraph.serve.package import extension_at, served
from keygraph.serve.request_log import OPERATION_CHARS, JsonFormatter
from keygraph.serve.secret import SECRET_ENV
from keygraph.store import Store
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.stores.view import Forwarding, Planned
from server.seed.tenant import SeedSizes, seed
from tests.keygraph.api.conftest import CASES, SECRET, bearer, served_client
from tests.keygraph.api.serving import keygraph_serve, unreported
from tests.keygraph.api.stalling import Stalling

R = TypeVar("R")
SIZES = SeedSizes(users=3, orders=2, groups=2, org_nodes=2, org_depth=1, shops=1, max_members=2)
NAMES = "query Names { users { edges { node { name } } } }"
PENDING = "query Pending { ordersByStatus(status: PENDING) { edges { node { orderId } } } }"
MADE_ID = re.compile(r"[0-9A-Z]{26}-\d+")
"""A request id made by the server: its process's ULID and a count."""


@pytest.fixture
async def stalling(tmp_path: Path) -> AsyncIterator[Stalling]:
    """This repository's table with a tenant's seed data, through a store that stalls the
    calls a test picks."""
    store = EmbeddedStore(TABLE, path=tmp_path / "keygraph.sqlite3")
    await seed(store, "acme", SIZES, progress=False)
    try:
        yield Stalling(store)
    finally:
        await store.close()


@asynccontextmanager
async def repository(store: Store, **options: Any) -> AsyncIterator[httpx.AsyncClient]:
    extension = extension_at("server.extension", "generated")
    async with served_client(served("generated", store, SECRET, [extension], **options)) as c:
        yield c


@pytest.fixture
def lines(caplog: pytest.LogCaptureFixture) -> Iterator[Callable[[], list[dict[str, Any]]]]:
    """The request log's lines so far, each as the JSON object it is written as."""
    with caplog.at_level(logging.INFO, logger="keygraph.request"):
        yield lambda: [
            {**json.loads(JsonFormatter().format(r)), "levelno": r.levelno}
            for r in caplog.records
            if r.name == "keygraph.request"
        ]


async def ask(client: httpx.AsyncClient, body: Any, **headers: str | bytes) -> httpx.Response:
    given: dict[str, str | bytes] = {**bearer(), **headers}
    sent = [(k.encode(), v if isinstance(v, bytes) else v.encode()) for k, v in given.items()]
    if isinstance(body, str):
        return await client.post("/graphql", content=body, headers=sent)
    return await client.post("/graphql", json=body, headers=sent)


async def test_a_success_a_refusal_and_a_bad_body_are_logged_one_line_each(
    stalling: Stalling, lines: Callable[[], list[dict[str, Any]]]
) -> None:
    async with repository(stalling) as client:
        ok = await ask(client, {"query": NAMES}, **{"x-request-id": "log-1"})
        refused = await ask(client, {"query": PENDING}, **{"x-request-id": "log-2"})
        bad = await ask(client, "{not json", **{"x-request-id": "log-3"})
    assert (ok.status_code, refused.status_code, bad.status_code) == (200, 200, 400)
    assert [r.headers["x-request-id"] for r in (ok, refused, bad)] == ["log-1", "log-2", "log-3"]
    success, refusal, body = lines()
    assert success["levelno"] == logging.INFO
    assert success["logger"] == "keygraph.request"
    assert success["message"] == "graphql request"
    assert {k: success[k] for k in ("request_id", "tenant", "operation", "status")} == {
        "request_id": "log-1",
        "tenant": "acme",
        "operation": "Names",
        "status": 200,
    }
    assert "code" not in success
    assert (success["store_calls"], success["store_waves"]) == (1, 1)
    assert success["read_units"] > 0
    assert success["write_units"] == 0
    assert success["duration_ms"] >= 0
    assert refusal["levelno"] == logging.WARNING
    assert refusal["message"] == "graphql request failed: FORBIDDEN"
    shown = (refusal["operation"], refusal["status"], refusal["code"])
    assert shown == ("Pending", 200, "FORBIDDEN")
    assert (refusal["store_calls"], refusal["read_units"]) == (0, 0)  # refused before a read
    assert body["levelno"] == logging.WARNING
    assert {k: body.get(k) for k in ("request_id", "tenant", "operation", "status", "code")} == {
        "request_id": "log-3",
        "tenant": "acme",  # its token was verified before its body was read
        "operation": None,
        "status": 400,
        "code": "BAD_REQUEST",
    }
    assert body["store_calls"] == 0


async def test_a_cut_request_is_logged_with_its_timeout(
    stalling: Stalling, lines: Callable[[], list[dict[str, Any]]]
) -> None:
    async with repository(stalling, request_timeout=0.2) as client:
        stalling.before = lambda _kind, _plan: True
        cut = await ask(client, {"query": NAMES}, **{"x-request-id": "log-cut"})
    assert cut.status_code == 504
    assert cut.headers["x-request-id"] == "log-cut"
    (line,) = lines()
    assert line["levelno"] == logging.WARNING
    assert line["message"] == "graphql request failed: TIMEOUT"
    assert {k: line[k] for k in ("request_id", "tenant", "operation", "status", "code")} == {
        "request_id": "log-cut",
        "tenant": "acme",
        "operation": "Names",
        "status": 504,
        "code": "TIMEOUT",
    }
    assert (line["store_calls"], line["store_waves"]) == (1, 1)  # the one that stalled
    assert line["duration_ms"] > 0


@pytest.mark.parametrize(
    "given",
    [
        b"a" * 10_000,
        "\u00e9t\u00e9".encode("latin-1"),
        "\u00fc".encode(),
        b"with space",
        b"a" * 65,
        b"",
        b"id\tx",
    ],
    ids=["huge", "latin-1", "utf-8", "space", "65", "empty", "tab"],
)
async def test_a_hostile_request_id_is_replaced_not_echoed(
    stalling: Stalling, lines: Callable[[], list[dict[str, Any]]], given: bytes
) -> None:
    async with repository(stalling) as client:
        answer = await ask(client, {"query": NAMES}, **{"x-request-id": given})
        plain = await ask(client, {"query": NAMES}, **{"x-request-id": "a" * 64})
    made = answer.headers["x-request-id"]
    assert MADE_ID.fullmatch(made), made
    assert plain.headers["x-request-id"] == "a" * 64
    assert [line["request_id"] for line in lines()] == [made, "a" * 64]


async def test_a_long_operation_name_is_logged_cut_short(
    stalling: Stalling, lines: Callable[[], list[dict[str, Any]]]
) -> None:
    name = "N" * 5_000
    async with repository(stalling) as client:
        answer = await ask(client, {"query": NAMES.replace("Names", name)})
    assert answer.status_code == 200
    (line,) = lines()
    assert line["operation"] == name[:OPERATION_CHARS] + "..."
    assert len(json.dumps(line)) < 1_000


class Failing(Forwarding):
    """Forwards every call; a Query raises an error no code is known for (a bug)."""

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        if kind == "Query":
            raise RuntimeError("secret detail of a bug")
        return await call()


async def test_a_bug_is_logged_with_its_traceback_and_the_answer_quotes_its_request_id(
    stalling: Stalling, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="keygraph"):
        async with repository(Failing(stalling)) as client:
            answer = await ask(client, {"query": NAMES}, **{"x-request-id": "bug-1"})
    (error,) = answer.json()["errors"]
    assert error["message"] == "internal error"
    assert error["extensions"] == {"code": "INTERNAL", "requestId": "bug-1"}
    assert "secret" not in answer.text
    (bug,) = [r for r in caplog.records if r.name == "keygraph.errors"]
    assert bug.levelno == logging.ERROR
    logged = json.loads(JsonFormatter().format(bug))
    assert (logged["request_id"], logged["code"]) == ("bug-1", "INTERNAL")
    assert "RuntimeError: secret detail of a bug" in logged["exception"]
    (line,) = [r for r in caplog.records if r.name == "keygraph.request"]
    assert getattr(line, "code", None) == "INTERNAL"


def test_keygraph_serve_logs_each_request_as_a_json_line(tmp_path: Path) -> None:
    spec = CASES / "webshop" / "spec.toml"
    env = {SECRET_ENV: SECRET, "KEYGRAPH_REQUEST_TIMEOUT": "5"}
    db = tmp_path / "db.sqlite3"
    with keygraph_serve("--spec", spec, "--db", db, cwd=tmp_path, env=env) as url:
        answer = httpx.post(
            f"{url}/graphql",
            json={"query": 'query Tea { product(sku: "TEA") { title } }'},
            headers={**bearer(), "x-request-id": "proc-1"},
        )
    assert unreported(answer.json()) == {"data": {"product": None}}
    assert answer.headers["x-request-id"] == "proc-1"
    printed = (tmp_path / "serve.log").read_text().splitlines()
    logged = [json.loads(line) for line in printed if line.startswith("{")]
    assert not any("HTTP/1.1" in line for line in printed)  # no access log: /healthz was asked
    (line,) = [line for line in logged if line["logger"] == "keygraph.request"]
    assert {k: line.get(k) for k in ("request_id", "tenant", "operation", "status", "code")} == {
        "request_id": "proc-1",
        "tenant": "acme",
        "operation": "Tea",
        "status": 200,
        "code": None,
    }
    assert (line["level"], line["store_calls"]) == ("info", 1)

"""The Lambda handler (keygraph.serve.lambda_handler) against `keygraph serve`'s app, on
DynamoDB Local (tests/codegen/cases/social): the same operations sent as HTTP API 2.0, REST
API, ALB and function URL events answer as they do over HTTP (status, media type, body), and
every DynamoDB call they make is one the generated stack's policy allows, which allows no
Scan and no index the spec does not read; an extension's field (KEYGRAPH_EXTEND) answers as
the spec's do; the scheduled sweep finishes what a delete left; a request whose store stalls
is cut at KEYGRAPH_REQUEST_TIMEOUT, or sooner when its invocation has less time left, and
logged as a JSON line on stderr."""

from __future__ import annotations

import asyncio
import importlib
import io
import json
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from keygraph.plan import Get
from keygraph.serve.lambda_time import LAMBDA_MARGIN_SECONDS
from keygraph.serve.request_log import LOGGERS
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET, DynamoDBLocal
from keygraph.tokens import issue
from keygraph.writes import owned
from testkit.stores import unique_table
from tests.keygraph.api.conftest import CASES, Compiled
from tests.keygraph.api.policy import Call, allowed, recording, stack_of
from tests.lambda_events import KINDS, answered, event

pytestmark = pytest.mark.dynamodb_local

SPEC = CASES / "social" / "spec.toml"
SECRET = "lambda-test-secret-" + "s" * 32


@pytest.fixture
def handler(
    compiled: Callable[[Path], Compiled],
    dynamodb_local: DynamoDBLocal,
    dynamodb_client: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[ModuleType, list[Call], dict[str, Any]]]:
    """The handler module imported for the social package on a new table, the calls its
    store makes, and the package's generated stack."""
    package = compiled(SPEC)
    table = unique_table(package.table)
    admin.create_table(dynamodb_client, table)
    environment = {
        "KEYGRAPH_PACKAGE": package.package.__name__,
        "KEYGRAPH_TABLE_NAME": table.name,
        "KEYGRAPH_ENDPOINT_URL": dynamodb_local.endpoint_url,
        "KEYGRAPH_JWT_SECRET": SECRET,
        "KEYGRAPH_EXTEND": "tests.keygraph.api.social_extension:extension",
        "AWS_REGION": LOCAL_REGION,
        "AWS_ACCESS_KEY_ID": LOCAL_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": LOCAL_SECRET,
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    calls = recording(monkeypatch)
    monkeypatch.setattr(logging.getLogger("uvicorn.access"), "disabled", False)
    for name in LOGGERS:  # the handler sends them to stderr as JSON: as they were after
        logger = logging.getLogger(name)
        for attribute in ("handlers", "level", "propagate"):
            monkeypatch.setattr(logger, attribute, getattr(logger, attribute))
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    sys.modules.pop("keygraph.serve.lambda_handler", None)
    module = importlib.import_module("keygraph.serve.lambda_handler")
    stack = stack_of(package)
    try:
        yield module, calls, stack
    finally:
        loop.run_until_complete(module.store.close())
        sys.modules.pop("keygraph.serve.lambda_handler", None)
        asyncio.set_event_loop(None)
        loop.close()
        admin.delete_table(dynamodb_client, table.name)


def bearer(tenant: str) -> str:
    return f"Bearer {issue(SECRET, tenant, 'm1', roles=['member'])}"


CREATE = 'mutation { createMember(input: {memberId: "m1", handle: "ann", name: "Ann"})'
CREATE += " { member { handle version } } }"
AGAIN = CREATE.replace('"m1"', '"m2"')
READ = '{ getMember(memberId: "m1") { handle name greeting } }'
Request = tuple[str, str, str | None, bool]
"""method, query string, body, whether it carries a token."""
REQUESTS: list[Request] = [
    ("POST", "", json.dumps({"query": CREATE}), True),
    ("POST", "", json.dumps({"query": AGAIN}), True),
    ("GET", "query=" + READ.replace(" ", "%20").replace('"', "%22"), None, True),
    ("POST", "", json.dumps({"query": READ}), False),
    ("POST", "", "{not json", True),
]


def over_http(module: ModuleType, request: Request, tenant: str) -> tuple[int, str, Any]:
    method, query, body, token = request
    transport = httpx.ASGITransport(app=module.app)

    async def send() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://serve.test") as c:
            headers = {
                "content-type": "application/json",
                "accept": "application/graphql-response+json",
            }
            if token:
                headers["authorization"] = bearer(tenant)
            return await c.request(method, f"/graphql?{query}", content=body, headers=headers)

    response = asyncio.get_event_loop().run_until_complete(send())
    return response.status_code, response.headers["content-type"], response.json()


def test_every_event_kind_answers_as_serve_does(
    handler: tuple[ModuleType, list[Call], dict[str, Any]],
) -> None:
    module, calls, stack = handler
    expected = [over_http(module, request, "over-http") for request in REQUESTS]
    assert [status for status, _, _ in expected] == [200, 200, 200, 401, 400]
    assert expected[1][2]["errors"][0]["extensions"]["code"] == "CONFLICT"
    assert expected[2][2]["data"]["getMember"]["greeting"] == "Hello, Ann (@ann)"
    for kind in KINDS:
        got = [
            answered(module.handler(event(kind, m, q, b, bearer(kind) if t else None), None))
            for m, q, b, t in REQUESTS
        ]
        assert got == expected, kind
    assert calls, "the store was never called"
    refused = [call for call in calls if not allowed(stack, call)]
    assert refused == []
    table = calls[0][1]
    assert not allowed(stack, ("Scan", table, None, None))
    assert not allowed(stack, ("Query", table, "GSI9", None))


class Invocation:
    """A Lambda context with `seconds` left."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds * 1000)


def test_the_scheduled_sweep_finishes_what_a_delete_left(
    handler: tuple[ModuleType, list[Call], dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member deleted with more posts than a page, the delete cut short after one: the
    scheduled function does nothing with less time than its margin, then finishes."""
    module, calls, stack = handler

    def send(document: str) -> Any:
        request = event("http-api", "POST", "", json.dumps({"query": document}), bearer("acme"))
        status, _, body = answered(module.handler(request, None))
        assert status == 200, body
        assert "errors" not in body, body
        return body["data"]

    send(CREATE)
    post = 'mutation { createPost(input: {memberId: "m1", text: "hi"}) { post { postId } } }'
    for _ in range(owned.PAGE + 3):
        send(post)
    monkeypatch.setattr(owned, "INLINE_SECONDS", 0.0)
    send('mutation { deleteMember(input: {memberId: "m1"}) { member { handle } } }')
    posts = '{ postsBy(memberId: "m1") { edges { node { postId } } } }'
    assert len(send(posts)["postsBy"]["edges"]) == 3
    margin = module.SWEEP_MARGIN_SECONDS
    assert module.sweep({}, Invocation(margin / 2)) == {"done": 0, "left": 1}
    assert module.sweep({}, Invocation(margin + 30)) == {"done": 1, "left": 0}
    assert send(posts)["postsBy"]["edges"] == []
    assert [call for call in calls if not allowed(stack, call)] == []


@pytest.fixture
def tracing(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """Traces on, printed to the buffer returned, for the handler imported next."""
    monkeypatch.setenv("KEYGRAPH_TRACING", "true")
    monkeypatch.setenv("KEYGRAPH_TRACE_EXPORTER", "console")
    printed = io.StringIO()
    monkeypatch.setattr(sys, "stdout", printed)  # where the exporter prints, from its start
    return printed


def test_an_invocations_spans_are_sent_before_it_returns(
    tracing: io.StringIO, handler: tuple[ModuleType, list[Call], dict[str, Any]]
) -> None:
    module, _, _ = handler
    assert module.provider is not None
    try:
        request = event("http-api", "POST", "", json.dumps({"query": CREATE}), bearer("acme"))
        status, _, body = answered(module.handler(request, None))
        assert status == 200, body
        printed = tracing.getvalue()  # at once: the environment may be frozen next
        assert printed.count('"kind": "SpanKind.SERVER"') == 1
        assert '"name": "TransactWriteItems other"' in printed
    finally:
        module.provider.shutdown()


@pytest.fixture
def timeout(monkeypatch: pytest.MonkeyPatch) -> float:
    """KEYGRAPH_REQUEST_TIMEOUT, for the handler imported next."""
    monkeypatch.setenv("KEYGRAPH_REQUEST_TIMEOUT", "0.4")
    return 0.4


def test_a_stalled_request_is_cut_before_its_invocation_ends_and_logged(
    timeout: float,
    capsys: pytest.CaptureFixture[str],
    handler: tuple[ModuleType, list[Call], dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module, _, _ = handler
    assert module.served_app.request_timeout == timeout
    never = asyncio.Event()

    async def stalled(_plan: Get) -> None:
        await never.wait()

    monkeypatch.setattr(module.store, "get", stalled)
    request = event("http-api", "POST", "", json.dumps({"query": READ}), bearer("acme"))
    for left, deadline in ((None, timeout), (LAMBDA_MARGIN_SECONDS + 0.2, 0.2)):
        context = None if left is None else Invocation(left)
        status, _, body = answered(module.handler(request, context))
        assert status == 504, body
        assert body["errors"][0]["extensions"]["code"] == "TIMEOUT"
        assert f"longer than {deadline:g} s" in body["errors"][0]["message"]
    printed = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    logged = [line for line in printed if line["logger"] == "keygraph.request"]
    assert [(line["status"], line["code"], line["tenant"]) for line in logged] == [
        (504, "TIMEOUT", "acme")
    ] * 2

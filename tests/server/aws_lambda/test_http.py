"""The server's HTTP function (server.aws_lambda.http) against its app over HTTP, on one
DynamoDB Local table: the same operations (a mutation, its conflict, a query by GET, no
token, a bad token, a malformed body) sent as each event kind and over HTTP answer alike:
status, the headers the app sets, body; and nothing runs on once an event is answered."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from keygraph.serve import create_app
from server.aws_lambda import environment, http
from server.compiled import compiled
from server.serving.backends import worker_store
from server.settings import load_settings
from tests.lambda_events import KINDS, event, headers_of
from tests.server.aws_lambda.conftest import bearer

pytestmark = pytest.mark.dynamodb_local

CREATE = "mutation($i: CreateUserInput!) { createUser(input: $i) { email name version } }"
READ = '{ userByEmail(email: "ann@example.org") { email name version } }'
ANN = {"i": {"email": "ann@example.org", "name": "Ann"}}
Request = tuple[str, str, str | None, str | None]
"""method, query string, body, the token: "good" (the tenant's), "bad", or None."""
REQUESTS: list[Request] = [
    ("POST", "", json.dumps({"query": CREATE, "variables": ANN}), "good"),
    ("POST", "", json.dumps({"query": CREATE, "variables": ANN}), "good"),
    ("GET", "query=" + READ.replace(" ", "%20").replace('"', "%22"), None, "good"),
    ("POST", "", json.dumps({"query": READ}), None),
    ("POST", "", json.dumps({"query": READ}), "bad"),
    ("POST", "", "{not json", "good"),
]
Answer = tuple[int, dict[str, str], Any]


def token_of(token: str | None, tenant: str) -> str | None:
    return {"good": bearer(tenant), "bad": "Bearer not.a.token", None: None}[token]


async def over_http(requests: list[Request], tenant: str) -> list[Answer]:
    """The answers of the app `serve` runs (`--store dynamodb`) on this table."""
    settings = load_settings(os.environ | {"KEYGRAPH_STORE": "dynamodb"})
    store = worker_store(settings, None)
    transport = httpx.ASGITransport(app=create_app(compiled(settings, store)))
    answers: list[Answer] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://serve.test") as client:
        for method, query, body, token in requests:
            headers = {
                "content-type": "application/json",
                "accept": "application/graphql-response+json",
            }
            authorization = token_of(token, tenant)
            if authorization is not None:
                headers["authorization"] = authorization
            response = await client.request(
                method, f"/graphql?{query}", content=body, headers=headers
            )
            answers.append((response.status_code, dict(response.headers), response.json()))
    await store.close()
    return answers


def on_lambda(kind: str, request: Request, tenant: str) -> Answer:
    method, query, body, token = request
    answer = http.handler(event(kind, method, query, body, token_of(token, tenant)), None)
    assert not answer.get("isBase64Encoded"), answer
    return answer["statusCode"], headers_of(answer), json.loads(answer["body"])


def comparable(answer: Answer) -> Answer:
    """The answer without its request id (a count of this process's requests)."""
    status, headers, body = answer
    assert headers.pop("x-request-id")
    return status, headers, body


def test_every_event_kind_answers_as_serve_does(deployed: str) -> None:
    loop = environment.loop()
    expected = [comparable(a) for a in loop.run_until_complete(over_http(REQUESTS, "serve"))]
    assert [status for status, _, _ in expected] == [200, 200, 200, 401, 401, 400]
    assert expected[1][2]["errors"][0]["extensions"]["code"] == "CONFLICT"
    assert expected[2][1]["cache-control"] == "private, max-age=0"
    assert expected[3][1]["www-authenticate"] == "Bearer"
    for kind in KINDS:  # each kind as a tenant of its own: its own user, its own budget
        got = [comparable(on_lambda(kind, request, kind)) for request in REQUESTS]
        assert got == expected, kind


def test_nothing_outlives_the_answer(deployed: str) -> None:
    """No subscriptions (no reader of the change stream), no task or thread left running
    once an event is answered: the environment freezes then."""
    threads = set(threading.enumerate())
    answer = http.handler(event("http-api", "POST", "", json.dumps({"query": READ}), None), None)
    assert answer["statusCode"] == 401
    assert isinstance(http.adapter().app, Starlette)
    assert asyncio.all_tasks(environment.loop()) == set()
    assert set(threading.enumerate()) <= threads

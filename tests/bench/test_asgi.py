"""The in-process client: a real Starlette app sees a well-formed POST and its answer comes
back whole, streamed or not; an app that stops before answering is an error."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from bench.asgi import AsgiClient


async def _echo(request: Request) -> JSONResponse:
    return JSONResponse(
        {
            "method": request.method,
            "path": request.url.path,
            "body": await request.json(),
            "auth": request.headers.get("authorization"),
            "type": request.headers.get("content-type"),
        },
        status_code=201,
    )


async def _streamed(request: Request) -> StreamingResponse:
    async def parts() -> Any:
        for part in (b'{"a"', b": ", b"[1, 2]}"):
            yield part

    return StreamingResponse(parts(), media_type="application/json")


APP = Starlette(
    routes=[Route("/echo", _echo, methods=["POST"]), Route("/stream", _streamed, methods=["POST"])]
)


async def test_posts_json_with_the_headers_and_reads_the_answer() -> None:
    client = AsgiClient(APP, {"Authorization": "Bearer t"})
    answer = await client.post("/echo", {"query": "{ x }", "n": [1, "é"]})
    assert answer.status_code == 201
    assert answer.json() == {
        "method": "POST",
        "path": "/echo",
        "body": {"query": "{ x }", "n": [1, "é"]},
        "auth": "Bearer t",
        "type": "application/json",
    }


async def test_a_streamed_answer_is_gathered_whole() -> None:
    answer = await AsgiClient(APP, {}).post("/stream", {})
    assert answer.json() == {"a": [1, 2]}
    assert answer.text == '{"a": [1, 2]}'


async def test_an_app_that_never_answers_is_an_error() -> None:
    async def silent(scope: Any, receive: Any, send: Any) -> None:
        await receive()

    with pytest.raises(RuntimeError, match="before finishing its answer"):
        await AsgiClient(silent, {}).post("/graphql", {})

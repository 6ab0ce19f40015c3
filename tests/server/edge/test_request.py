"""The request the endpoint reads: a body replaced by its JSON (a persisted operation's
document put in place of its hash) is serialized only when something reads the body; it
holds what observability reads of it."""

from __future__ import annotations

from typing import Any

from server.edge.request import GraphQLRequest
from server.observability.requests import ObservedRequest


async def test_a_replaced_body_is_serialized_when_read_and_not_before() -> None:
    sent = [{"type": "http.request", "body": b'{"query": "{ a }"}', "more_body": False}]

    async def receive() -> dict[str, Any]:
        return sent.pop(0)

    scope = {"type": "http", "method": "POST", "headers": [], "query_string": b"", "path": "/"}
    request = GraphQLRequest(scope, receive)
    assert await request.json() == {"query": "{ a }"}
    request.replace_json({"query": "{ b }", "extensions": {}})
    assert request._body == b'{"query": "{ a }"}'  # a hit that only runs never pays for it
    assert await request.body() == b'{"extensions":{},"query":"{ b }"}'
    assert await request.json() == {"query": "{ b }", "extensions": {}}


async def test_the_request_is_what_observability_reads() -> None:
    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": "GET", "headers": [], "query_string": b"", "path": "/"}
    observed: ObservedRequest = GraphQLRequest(scope, receive)  # mypy checks the attributes
    assert (observed.code, observed.claims, observed.ctx) == (None, None, None)
    assert observed.request_id
    assert observed.meter.read_units == 0

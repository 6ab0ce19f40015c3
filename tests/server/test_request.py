"""The request the endpoint reads: a body replaced by its JSON (a persisted operation's
document put in place of its hash) is serialized only when something reads the body."""

from __future__ import annotations

from typing import Any

from server.edge.request import GraphQLRequest


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

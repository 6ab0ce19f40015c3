"""A GraphQL request as the endpoint sees it: its id, what is learned about it on the way
(claims, context, Idempotency-Key, persisted document, metered capacity), and its body,
parameters and headers, each decoded once and shared by both execution paths."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope

from keygraph import capacity
from keygraph.serve.request_log import REQUEST_ID_HEADER, request_id
from server.auth.tokens import Claims
from server.edge.keyed import Keyed
from server.graphql.context import RequestContext


class GraphQLRequest(Request):
    """A request with what the endpoint learns about it on the way, as plain attributes
    (Starlette's `request.state` costs a property, a dict and a lookup on every use)."""

    def __init__(self, scope: Scope, receive: Receive) -> None:
        super().__init__(scope, receive)
        self._by_name: dict[bytes, bytes] | None = None
        self._json_replaced = False
        self.request_id = request_id(self.header(REQUEST_ID_HEADER))
        """The caller's X-Request-Id when it is a plain one, else a new one
        (keygraph/serve/request_log.py)."""
        self.claims: Claims | None = None
        self.ctx: RequestContext | None = None
        self.sub_response: Response | None = None
        self.keyed: Keyed | None = None
        """The request's Idempotency-Key, claimed only by a mutation about to run
        (edge/keyed.py)."""
        self.document: str | None = None
        """The persisted document run in place of the request's query
        (keygraph/serve/persisted.py)."""
        self.document_cache: str | None = None
        """How compiled execution found the request's document (Preparation.resolve)."""
        self.meter = capacity.Meter()
        self.code: str | None = None
        """The code of the failure that decided the response (a refusal's, else the first
        GraphQL error's), for the request log: a request with one logs a warning."""

    async def body(self) -> bytes:
        """The whole body, read from the channel directly: Starlette reads it through an
        async generator, which costs a small request a few percent of its time. After
        `replace_json`, the replacement serialized (keys sorted)."""
        if self._json_replaced:
            self._json_replaced = False
            self._body = orjson.dumps(self._json, option=orjson.OPT_SORT_KEYS)
        if not hasattr(self, "_body"):
            chunks = []
            while True:
                message = await self._receive()
                if message["type"] == "http.disconnect":
                    raise ClientDisconnect()
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    break
            self._body = b"".join(chunks)
        return self._body

    async def json(self) -> Any:
        """The body decoded as JSON (once: compiled execution and the body check share it);
        orjson.JSONDecodeError when it is not JSON."""
        if not hasattr(self, "_json"):
            self._json = orjson.loads(await self.body())
        return self._json

    def replace_json(self, data: dict[str, Any]) -> None:
        """Make `data` the body's JSON; the body is serialized from it only if it is read
        (an Idempotency-Key's digest, Strawberry's view), not on every request."""
        self._json = data
        self._json_replaced = True

    def params(self) -> dict[str, Any]:
        """A GET's parameters, with `variables` and `extensions` decoded from JSON (once:
        compiled execution and persisted operations share them); orjson.JSONDecodeError
        when either is not JSON."""
        if not hasattr(self, "_params"):
            params: dict[str, Any] = dict(self.query_params)
            for name in ("variables", "extensions"):
                if params.get(name):
                    params[name] = orjson.loads(params[name])
            self._params = params
        return self._params

    def header(self, name: str) -> str | None:
        """A header's first value by its lower-case name, from a dict built once: a lookup
        in Starlette's Headers scans them all."""
        by_name = self._by_name
        if by_name is None:
            by_name = self._by_name = dict(reversed(self.scope["headers"]))
        value = by_name.get(name.encode("latin-1"))
        return None if value is None else value.decode("latin-1")


def posts_json(request: GraphQLRequest) -> bool:
    """Whether the request is a POST of a JSON body."""
    return request.method == "POST" and "application/json" in (request.header("content-type") or "")


def own(request: object) -> GraphQLRequest:
    """`request` as the endpoint's own: Strawberry's view hands requests back untyped."""
    if not isinstance(request, GraphQLRequest):
        raise TypeError("the endpoint serves only the requests it wrapped itself")
    return request

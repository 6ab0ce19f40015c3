"""GraphQL over HTTP: authentication, the per-request context, response shaping and logs.

POST (JSON) and GET (queries only) go to Strawberry's ASGI view. Every GraphQL request needs a
verified bearer token; the tenant comes from it alone. A client that accepts
`application/graphql-response+json` gets that media type, and HTTP 400 when the request fails
before execution (parse, validation, limits); others get `application/json` and 200. In dev
mode each response's `extensions` reports the request's store calls and waves.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import orjson
from cross_web import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.types import Receive, Scope, Send
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLHTTPResponse
from strawberry.schema.base import BaseSchema
from strawberry.types import ExecutionResult
from strawberry.types.execution import PreExecutionError

from keygraph.cursor import CursorCodec
from keygraph.store import Session, Store
from server.domain.ids import new_id
from server.edge.auth import Claims, Verifier
from server.errors import Unauthenticated
from server.graphql.context import Context
from server.graphql.counting import CountingStore
from server.graphql.error_format import format_error

log = logging.getLogger("keygraph.request")

GRAPHQL_RESPONSE = "application/graphql-response+json"
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_HEADERS_MARKER = "React.useState(parameters.headers)"


@dataclass
class RequestContext(Context):
    """The resolvers' Context plus what the HTTP layer reports about the request."""

    counter: CountingStore | None = None
    operation_name: str | None = None


class FastJSON:
    """Request and response bodies through orjson: several times faster than the standard
    library on large responses. Mixed into a Strawberry view before its base class."""

    def decode_json(self, data: str | bytes) -> object:
        return orjson.loads(data)

    def encode_json(self, data: object) -> bytes:
        return orjson.dumps(data)


def _wants_graphql_response(request: Request) -> bool:
    return GRAPHQL_RESPONSE in request.headers.get("accept", "")


def _error_response(request: Request, status: int, message: str, code: str) -> Response:
    body = {"errors": [{"message": message, "extensions": {"code": code}}]}
    media = GRAPHQL_RESPONSE if _wants_graphql_response(request) else "application/json"
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return Response(json.dumps(body), status_code=status, media_type=media, headers=headers)


def graphiql_html(base_html: str, authorization: str | None) -> str:
    """Strawberry's GraphiQL page with the Authorization header prefilled."""
    if authorization is None:
        return base_html
    if _HEADERS_MARKER not in base_html:
        raise RuntimeError("the GraphiQL page changed: cannot prefill its headers")
    headers = json.dumps(json.dumps({"Authorization": authorization}, indent=2))
    return base_html.replace(_HEADERS_MARKER, f"React.useState(parameters.headers || {headers})")


class GraphQLRequest(Request):
    """A request with what the endpoint learns about it on the way, as plain attributes
    (Starlette's `request.state` costs a property, a dict and a lookup on every use)."""

    def __init__(self, scope: Scope, receive: Receive) -> None:
        super().__init__(scope, receive)
        supplied_id = self.headers.get("x-request-id", "")
        self.request_id = supplied_id if _REQUEST_ID.match(supplied_id) else new_id()
        self.claims: Claims | None = None
        self.ctx: RequestContext | None = None
        self.sub_response: Response | None = None


def _own(request: object) -> GraphQLRequest:
    if not isinstance(request, GraphQLRequest):
        raise TypeError("the endpoint serves only the requests it wrapped itself")
    return request


class GraphQLEndpoint(FastJSON, GraphQL[RequestContext, None]):
    def __init__(
        self,
        schema: BaseSchema,
        *,
        store: Store,
        verifier: Verifier,
        cursors: CursorCodec,
        dev: bool,
        graphiql: bool,
        graphiql_authorization: Callable[[], str] | None = None,
        batching: bool = True,
    ) -> None:
        super().__init__(
            schema,
            graphql_ide="graphiql" if graphiql else None,
            allow_queries_via_get=True,
            subscription_protocols=(),
        )
        self.store = store
        self.verifier = verifier
        self.cursors = cursors
        self.dev = dev
        self.batching = batching
        self._graphiql_authorization = graphiql_authorization
        if graphiql and graphiql_authorization is not None:
            graphiql_html(self.graphql_ide_html, "")  # fail at start if it cannot be prefilled

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await PlainTextResponse("Not Found", status_code=404)(scope, receive, send)
            return
        started = time.perf_counter()
        request = GraphQLRequest(scope, receive)
        try:
            response = await self._respond(request)
        finally:
            if request.ctx is not None:
                request.ctx.close()
        response.headers["X-Request-Id"] = request.request_id
        await response(scope, receive, send)
        ctx = request.ctx
        counter = ctx.counter if ctx is not None else None
        log.info(
            "graphql request",
            extra={
                "request_id": request.request_id,
                "tenant": request.claims.tenant if request.claims is not None else None,
                "operation": ctx.operation_name if ctx is not None else None,
                "status": response.status_code,
                "store_calls": counter.calls if counter is not None else 0,
                "store_waves": counter.waves if counter is not None else 0,
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
            },
        )

    async def _respond(self, request: GraphQLRequest) -> Response:
        if self.should_render_graphql_ide(self.request_adapter_class(request)):
            if self.graphql_ide is None:
                return PlainTextResponse("Not Found", status_code=404)
            authorization = self._graphiql_authorization
            token = authorization() if authorization is not None else None
            return HTMLResponse(graphiql_html(self.graphql_ide_html, token))
        try:
            claims = self.verifier.verify_header(request.headers.get("authorization"))
        except Unauthenticated as exc:
            return _error_response(request, 401, str(exc), Unauthenticated.code)
        request.claims = claims
        try:
            return await self.run(request)
        except HTTPException as exc:
            if request.method == "GET" and "mutation" in exc.reason:
                # GraphQL over HTTP: a mutation sent with GET is 405, to be retried as POST
                response = _error_response(request, 405, exc.reason, "BAD_REQUEST")
                response.headers["Allow"] = "POST"
                return response
            return _error_response(request, exc.status_code, exc.reason, "BAD_REQUEST")

    async def get_sub_response(self, request: Any) -> Response:
        sub_response = await super().get_sub_response(request)
        _own(request).sub_response = sub_response
        return sub_response

    async def get_context(self, request: Any, response: Any) -> RequestContext:
        request = _own(request)
        claims = request.claims
        if claims is None:
            raise RuntimeError("a GraphQL context is built only for a verified request")
        counter = CountingStore(self.store)
        ctx = RequestContext(
            tenant=claims.tenant,
            subject=claims.subject,
            session=Session(store=counter, cursors=self.cursors),
            request_id=request.request_id,
            dev=self.dev,
            batching=self.batching,
            counter=counter,
        )
        request.ctx = ctx
        return ctx

    async def process_result(self, request: Any, result: ExecutionResult) -> GraphQLHTTPResponse:
        own = _own(request)
        ctx, sub_response = own.ctx, own.sub_response
        if ctx is None or sub_response is None:
            raise RuntimeError("a result is processed only after its context is built")
        # Failures before execution (parse, validation, limits, variable coercion) are
        # request errors: no data, and no error carries a path.
        before_execution = isinstance(result, PreExecutionError) or (
            result.data is None
            and bool(result.errors)
            and all(error.path is None for error in result.errors or ())
        )
        modern = _wants_graphql_response(request)
        body: dict[str, Any] = {}
        if not (modern and before_execution):
            body["data"] = result.data
        if result.errors:
            body["errors"] = [format_error(error, ctx.request_id) for error in result.errors]
        extensions = dict(result.extensions or {})
        if self.dev and ctx.counter is not None:
            extensions.update(storeCalls=ctx.counter.calls, storeWaves=ctx.counter.waves)
        if extensions:
            body["extensions"] = extensions
        if modern:
            sub_response.media_type = GRAPHQL_RESPONSE
            if before_execution:
                sub_response.status_code = 400
        return cast(GraphQLHTTPResponse, body)

    def create_response(
        self, response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse], sub_response: Response
    ) -> Response:
        response = Response(
            self.encode_json(response_data),
            status_code=sub_response.status_code or 200,
            media_type=sub_response.media_type or "application/json",
        )
        for name, value in sub_response.headers.items():
            if name.lower() not in ("content-type", "content-length"):
                response.headers.append(name, value)
        return response

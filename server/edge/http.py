"""GraphQL over HTTP: request limits, authentication, the per-request context, response
shaping and logs.

POST (JSON) and GET (queries only) go to Strawberry's ASGI view; a POST's body must be one
operation as a JSON object (a batch, a JSON array, is refused with 400 like any other body
that is no GraphQL request: edge/request_body.py). Before anything is read, a
request is refused when its Content-Length or query string is too large (413/414) or when
the worker already runs its most requests (503, Retry-After); its body is cut off at the
limit as it streams in (413), and it is cancelled at its timeout (504, TIMEOUT). Every GraphQL
request needs a verified bearer token; the tenant comes from it alone. A client that accepts
`application/graphql-response+json` gets that media type, and HTTP 400 when the request fails
before execution (parse, validation, variables, limits); others get `application/json` and
200. A tenant over its budget gets 429 with Retry-After. Every response's `extensions.cost`
gives the requested and actual cost and the tenant's remaining budget; in dev mode
`extensions` also reports the request's store calls and waves. A POST with an
Idempotency-Key runs once within the key's window; retries get its first answer
(edge/idempotency.py). A request may name its document by sha256 (edge/persisted.py); a GET
answer says how long caches may keep it. Each request logs one line: a warning with its
code when it was refused or any error came back, else info.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
import time
from collections.abc import Callable
from typing import Any, cast

import orjson
from cross_web import HTTPException
from graphql import GraphQLError
from starlette.datastructures import QueryParams
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLHTTPResponse
from strawberry.schema.base import BaseSchema
from strawberry.types import ExecutionResult
from strawberry.types.execution import PreExecutionError

from keygraph import capacity
from keygraph.cursor import CursorCodec
from keygraph.store import Session, Store
from server.domain.ids import new_id
from server.edge import fast_path, graphiql, idempotency, persisted, request_body
from server.edge.auth import Claims, Verifier
from server.edge.deadlines import Deadlines
from server.edge.guard import BodyTooLarge, Guard, Refusal
from server.edge.streamed import StreamedResponse
from server.errors import Unauthenticated
from server.graphql.budget import TenantBudget
from server.graphql.context import RequestContext
from server.graphql.cost import count_objects
from server.graphql.counting import CountingStore
from server.graphql.error_format import format_error
from server.graphql.schema import KeygraphSchema
from server.graphql.stream import Stream
from server.settings import Limits

log = logging.getLogger("keygraph.request")

GRAPHQL_RESPONSE = "application/graphql-response+json"
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_REPLAYED = "REPLAYED"
"""The request log's code for an Idempotency-Key's retry, answered as it was the first time."""
_CALLERS_REMEMBERED = 4096
"""Callers whose cursor codec is kept (one HMAC each to derive)."""
REQUEST_SCOPE_KEY = "keygraph.request"
"""Where the ASGI scope holds the request, for what wraps the endpoint to read once it
answered (server/observability/requests.py)."""


class FastJSON:
    """Request and response bodies through orjson: several times faster than the standard
    library on large responses. Mixed into a Strawberry view before its base class."""

    def decode_json(self, data: str | bytes) -> object:
        return orjson.loads(data)

    def encode_json(self, data: object) -> bytes:
        return orjson.dumps(data)


def _wants_graphql_response(request: GraphQLRequest) -> bool:
    return GRAPHQL_RESPONSE in (request.header("accept") or "")


class _RequestIds:
    """Request ids unique across processes and hosts without a random draw each: a ULID
    drawn once per process (again in a forked child), then a counter."""

    def __init__(self) -> None:
        self._prefix, self._count = new_id(), itertools.count()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._prefix, self._count = new_id(), itertools.count()

    def next(self) -> str:
        return f"{self._prefix}-{next(self._count)}"


_request_ids = _RequestIds()


class GraphQLRequest(Request):
    """A request with what the endpoint learns about it on the way, as plain attributes
    (Starlette's `request.state` costs a property, a dict and a lookup on every use)."""

    def __init__(self, scope: Scope, receive: Receive) -> None:
        super().__init__(scope, receive)
        self._by_name: dict[bytes, bytes] | None = None
        supplied_id = self.header("x-request-id") or ""
        self.request_id = supplied_id if _REQUEST_ID.match(supplied_id) else _request_ids.next()
        self.claims: Claims | None = None
        self.ctx: RequestContext | None = None
        self.sub_response: Response | None = None
        self.idempotency_key: str | None = None
        self.document: str | None = None
        """The persisted document run in place of the request's query (edge/persisted.py)."""
        self.meter = capacity.Meter()
        self.code: str | None = None
        """The code of the failure that decided the response (a refusal's, else the first
        GraphQL error's), for the request log: a request with one logs a warning."""

    async def body(self) -> bytes:
        """The whole body, read from the channel directly: Starlette reads it through an
        async generator, which costs a small request a few percent of its time."""
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


async def _body_problem(request: GraphQLRequest) -> str | None:
    """Why a POST's JSON body cannot be a GraphQL request (edge/request_body.py); None when
    it can, and for other requests (Strawberry's view checks them)."""
    if not _posts_json(request):
        return None
    try:
        data = await request.json()
    except orjson.JSONDecodeError:
        return request_body.NOT_JSON
    return request_body.problem(data)


def _posts_json(request: GraphQLRequest) -> bool:
    return request.method == "POST" and "application/json" in (request.header("content-type") or "")


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
        limits: Limits,
        budget: TenantBudget,
        dev: bool,
        graphiql: bool,
        graphiql_authorization: Callable[[], str] | None = None,
        documents: persisted.Documents | None = None,
        get_max_age: int = 0,
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
        self._caller_cursors: dict[str | None, CursorCodec] = {}
        self.limits = limits
        self.budget = budget
        self.guard = Guard(limits)
        self.deadlines = Deadlines(limits.request_timeout)
        self.ledger = idempotency.Ledger(store, limits.idempotency_window, limits.request_timeout)
        self._releasing: set[asyncio.Future[None]] = set()
        self.dev = dev
        self.batching = batching
        self._graphiql_authorization = graphiql_authorization
        self.documents = persisted.Documents() if documents is None else documents
        self.get_cache_control = (
            f"public, max-age={get_max_age}" if get_max_age > 0 else "private, max-age=0"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await PlainTextResponse("Not Found", status_code=404)(scope, receive, send)
            return
        started = time.perf_counter()
        request = scope[REQUEST_SCOPE_KEY] = GraphQLRequest(scope, self.guard.receive(receive))
        refusal = self.guard.refuse(scope)
        if refusal is not None:
            response = self._refused(request, refusal)
        else:
            with self.guard.running():
                response = await self._run_limited(request)
        response.headers["X-Request-Id"] = request.request_id
        await response(scope, receive, send)
        self._log(request, response, started)

    async def _run_limited(self, request: GraphQLRequest) -> Response:
        """The request's response, within its timeout and body limit."""
        deadline = self.deadlines.deadline()
        try:
            with capacity.metering() as meter:
                request.meter = meter
                with deadline:
                    return await self._respond(request)
        except BodyTooLarge:
            limit = self.limits.max_body_bytes
            message = f"the request body is larger than {limit} bytes"
            return self._refused(request, Refusal(413, "REQUEST_TOO_LARGE", message))
        except TimeoutError:
            if not deadline.expired():
                raise
            timeout = self.deadlines.timeout
            message = f"the request took longer than {timeout:g} s and was cancelled"
            return self._refused(request, Refusal(504, "TIMEOUT", message))
        finally:
            if request.ctx is not None:
                request.ctx.close()

    def _refused(self, request: GraphQLRequest, refusal: Refusal) -> Response:
        """The JSON error response of a request that did not run to its end."""
        request.code = refusal.code
        headers = {}
        if refusal.retry_after is not None:
            headers["Retry-After"] = str(refusal.retry_after)
        if refusal.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        if refusal.status == 413:
            headers["Connection"] = "close"  # the rest of the body is never read
        body = {
            "errors": [{"message": refusal.message, "extensions": {"code": refusal.code}}],
            "extensions": {"cost": self._cost(request, None)},
        }
        media = GRAPHQL_RESPONSE if _wants_graphql_response(request) else "application/json"
        return Response(
            orjson.dumps(body), status_code=refusal.status, media_type=media, headers=headers
        )

    def _log(self, request: GraphQLRequest, response: Response, started: float) -> None:
        ctx = request.ctx
        counter = ctx.counter if ctx is not None else None
        fields = {
            "request_id": request.request_id,
            "tenant": request.claims.tenant if request.claims is not None else None,
            "operation": ctx.operation_name if ctx is not None else None,
            "status": response.status_code,
            "code": request.code,
            "store_calls": counter.calls if counter is not None else 0,
            "store_waves": counter.waves if counter is not None else 0,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        }
        if response.status_code >= 500 or request.code not in (None, _REPLAYED):
            log.warning("graphql request failed: %s", request.code, extra=fields)
        else:
            log.info("graphql request", extra=fields)

    async def _respond(self, request: GraphQLRequest) -> Response:
        if request.method == "GET" and "text/html" in (request.header("accept") or ""):
            # A browser: GraphiQL, with `?query=` (and `&variables=`) in its editors.
            if self.graphql_ide is None:
                return PlainTextResponse("Not Found", status_code=404)
            authorization = self._graphiql_authorization
            token = authorization() if authorization is not None else None
            return graphiql.page(request.url.path, token)
        try:
            claims = self.verifier.verify_header(request.header("authorization"))
        except Unauthenticated as exc:
            return self._refused(request, Refusal(401, Unauthenticated.code, str(exc)))
        request.claims = claims
        response = await self._answer(request, claims)
        if request.method == "GET":
            # A CDN may keep a query's answer, one per Authorization (each caller's own).
            ok = response.status_code == 200 and request.code is None
            response.headers["Cache-Control"] = self.get_cache_control if ok else "no-store"
            response.headers["Vary"] = "Authorization"
        return response

    async def _answer(self, request: GraphQLRequest, claims: Claims) -> Response:
        """The response to a verified request."""
        problem = await _body_problem(request)
        if problem is not None:  # refused before an Idempotency-Key is claimed
            return self._refused(request, Refusal(400, "BAD_REQUEST", problem))
        refused = await self._resolve_persisted(request)
        if refused is not None:
            return self._refused(request, refused)
        key = request.header(idempotency.HEADER)
        if key is not None and request.method == "POST":
            return await self._run_once(request, claims, key)
        return await self._execute(request)

    async def _resolve_persisted(self, request: GraphQLRequest) -> Refusal | None:
        """Put the document a persisted operation names in place of the request's query
        (edge/persisted.py); why it must not run, if so."""
        if request.method == "GET":
            if "extensions" not in request.query_params and self.documents.trusted is None:
                return None
            try:
                data = request.params()
            except orjson.JSONDecodeError:
                return Refusal(400, "BAD_REQUEST", request_body.NOT_JSON)
        elif _posts_json(request):
            data = await request.json()
        else:
            return None
        resolved = persisted.resolve(data, self.documents, self._prepares)
        if resolved is None or isinstance(resolved, Refusal):
            return resolved
        request.document = resolved
        if request.method == "GET":
            data["query"] = resolved  # Strawberry's view reads it once compiled execution declines
        else:
            # one body for the hash alone and for the hash with its text: an Idempotency-Key's
            # retry by hash is the same request as its first send
            data = {**data, "query": resolved}
            request._json = data
            request._body = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
        return None

    async def _run_once(self, request: GraphQLRequest, claims: Claims, given: str) -> Response:
        """A request with an Idempotency-Key: its first answer, once, to the same caller
        (edge/idempotency.py)."""
        if not idempotency.valid_key(given):
            message = "Idempotency-Key must be 1 to 255 printable ASCII characters"
            return self._refused(request, Refusal(400, "BAD_REQUEST", message))
        key = idempotency.caller_key(claims.subject, given)
        body = idempotency.digest(await request.body())
        outcome = await self.ledger.claim(claims.tenant, key, body)
        if isinstance(outcome, idempotency.Refused):
            refusal = Refusal(outcome.status, outcome.code, outcome.message, outcome.retry_after)
            return self._refused(request, refusal)
        if isinstance(outcome, idempotency.Answer):
            request.code = _REPLAYED
            headers = {idempotency.REPLAYED: "true"}
            return Response(outcome.body, outcome.status, headers, outcome.media_type)
        request.idempotency_key = key
        try:
            response = await self._execute(request)
        except BaseException:
            # cancelled (timeout, shutdown) or failed: a retry runs again
            release = asyncio.ensure_future(self.ledger.release(outcome))
            self._releasing.add(release)
            release.add_done_callback(self._releasing.discard)
            raise
        media = response.media_type or "application/json"
        await self.ledger.keep(
            outcome, idempotency.Answer(response.status_code, media, bytes(response.body))
        )
        return response

    async def _execute(self, request: GraphQLRequest) -> Response:
        compiled = await fast_path.answer(self, request)
        if compiled is not None:
            return compiled
        if request.method == "GET" and request.document is not None:
            params = dict(request.query_params)
            params["query"] = request.document
            request._query_params = QueryParams(params)
        try:
            return await self.run(request)
        except HTTPException as exc:
            if request.method == "GET" and "mutation" in exc.reason:
                # GraphQL over HTTP: a mutation sent with GET is 405, to be retried as POST
                response = self._refused(request, Refusal(405, "BAD_REQUEST", exc.reason))
                response.headers["Allow"] = "POST"
                return response
            return self._refused(request, Refusal(exc.status_code, "BAD_REQUEST", exc.reason))

    def _prepares(self, query: str) -> bool:
        """Whether `query` parses and validates (within the limits), as it will be run."""
        schema = self.schema
        if not isinstance(schema, KeygraphSchema):
            return True
        try:
            return not schema.preparation.prepared(schema._schema, query).errors
        except GraphQLError:
            return False

    def should_render_graphql_ide(self, request: Any) -> bool:
        """Never here: a browser gets the endpoint's own page before (`_respond`), and any
        other GET without a `query` (`Accept: */*`, a persisted query's odd parameters) is a
        request naming no operation, not one for Strawberry's page."""
        return False

    async def get_sub_response(self, request: Any) -> Response:
        sub_response = _SubResponse()
        _own(request).sub_response = sub_response
        return sub_response

    async def get_context(self, request: Any, response: Any) -> RequestContext:
        request = _own(request)
        claims = request.claims
        if claims is None:
            raise RuntimeError("a GraphQL context is built only for a verified request")
        key = request.idempotency_key
        store = (
            self.store if key is None else idempotency.TokenedStore(self.store, claims.tenant, key)
        )
        counter = CountingStore(store)
        cursors = self._cursors_of(claims.subject)
        ctx = RequestContext(
            tenant=claims.tenant,
            caller=claims.caller,
            unrestricted=claims.unrestricted,
            session=Session(counter, cursors, claims.caller),
            server_session=Session(counter, cursors),
            request_id=request.request_id,
            dev=self.dev,
            batching=self.batching,
            counter=counter,
            budget=self.budget,
        )
        request.ctx = ctx
        return ctx

    def _cursors_of(self, subject: str | None) -> CursorCodec:
        """The cursor codec of one caller: its cursors are its own (cursor.py)."""
        codec = self._caller_cursors.get(subject)
        if codec is None:
            if len(self._caller_cursors) >= _CALLERS_REMEMBERED:
                self._caller_cursors.clear()
            codec = self._caller_cursors[subject] = self.cursors.bound_to(subject)
        return codec

    def _cost(self, request: GraphQLRequest, data: Any) -> dict[str, Any]:
        """extensions.cost: requested and actual cost, and (once the tenant is known) its
        budget. Points the request did not use go back to the budget here."""
        ctx = request.ctx
        estimate = ctx.estimate if ctx is not None else None
        objects = count_objects(data, estimate.shape) if estimate is not None else 0
        if ctx is not None and ctx.stream is not None:
            objects += ctx.stream.objects()
        meter = request.meter
        cost: dict[str, Any] = {
            "requested": estimate.cost if estimate is not None else 0,
            "limit": self.limits.max_cost,
            "actual": {
                "objects": objects,
                "storeCalls": ctx.counter.calls if ctx is not None and ctx.counter else 0,
                "readUnits": meter.read_units,
                "writeUnits": meter.write_units,
            },
        }
        if request.claims is not None:
            tenant = request.claims.tenant
            admission = ctx.admission if ctx is not None else None
            if admission is not None and admission.admitted and estimate is not None:
                remaining = self.budget.refund(tenant, estimate.cost - objects)
            else:
                remaining = self.budget.remaining(tenant)
            cost["budget"] = {
                "remaining": int(remaining),
                "capacity": int(self.budget.capacity),
                "refillPerSecond": self.budget.refill_per_second,
            }
        return cost

    async def process_result(self, request: Any, result: ExecutionResult) -> GraphQLHTTPResponse:
        own = _own(request)
        ctx, sub_response = own.ctx, own.sub_response
        if ctx is None or sub_response is None:
            raise RuntimeError("a result is processed only after its context is built")
        ctx.close()  # what the loaders read is in the result: free it before serializing
        # Failures before execution (parse, validation, limits, variable coercion) are
        # request errors: no data, and no error carries a path.
        before_execution = isinstance(result, PreExecutionError) or (
            result.data is None
            and bool(result.errors)
            and all(error.path is None for error in result.errors or ())
        )
        modern = _wants_graphql_response(own)
        body: dict[str, Any] = {}
        if not (modern and before_execution):
            body["data"] = result.data
        if result.errors:
            body["errors"] = [format_error(error, ctx.request_id) for error in result.errors]
            own.code = body["errors"][0]["extensions"]["code"]
            codes = {error["extensions"]["code"] for error in body["errors"]}
            if "THROTTLED" in codes and ctx.admission is not None:
                own.code = "THROTTLED"
                sub_response.status_code = 429
                sub_response.headers["Retry-After"] = str(ctx.admission.retry_after)
        extensions = dict(result.extensions or {})
        extensions["cost"] = self._cost(own, result.data)
        if self.dev and ctx.counter is not None:
            extensions.update(storeCalls=ctx.counter.calls, storeWaves=ctx.counter.waves)
        body["extensions"] = extensions
        if modern:
            sub_response.media_type = GRAPHQL_RESPONSE
            if before_execution and sub_response.status_code != 429:
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
        return _with_headers(response, sub_response)

    def create_streamed_response(
        self, response_data: GraphQLHTTPResponse, stream: Stream, sub_response: Response
    ) -> Response:
        """The response of a result read in parts: its data spliced with the parts' pieces
        as they are sent (server/graphql/stream.py)."""
        length, pieces = stream.body(self.encode_json(response_data))
        response = StreamedResponse(
            length,
            pieces,
            status_code=sub_response.status_code or 200,
            media_type=sub_response.media_type or "application/json",
        )
        return _with_headers(response, sub_response)


class _SubResponse(Response):
    """What result processing decides before the response exists: a status, a media type,
    headers. Nothing is rendered, and headers are parsed only once one is set."""

    def __init__(self) -> None:
        self.status_code = None  # type: ignore[assignment]
        self.media_type = None
        self.raw_headers = []
        self.body = b""
        self.background = None


def _with_headers(response: Response, sub_response: Response) -> Response:
    """`response` with the headers result processing set."""
    if sub_response.raw_headers:
        for name, value in sub_response.headers.items():
            if name.lower() not in ("content-type", "content-length"):
                response.headers.append(name, value)
    return response

"""GraphQL over HTTP, the edge every request passes: request limits, authentication,
persisted documents, Idempotency-Key and logs.

POST (JSON) and GET (queries only) then go to compiled execution (edge/fast_path.py), and
what it declines to Strawberry's view beside it (edge/strawberry_view.py); both build the
context, the result's body and the response alike (edge/request_context.py, result.py,
response.py). A POST's body must be one operation as a JSON object (a batch, a JSON array,
is refused with 400 like any other body that is no GraphQL request: edge/request_body.py).
Before anything is read, a request is refused when its Content-Length or query string is too
large (413/414) or when the worker already runs its most requests (503, Retry-After); its
body is cut off at the limit as it streams in (413), and it is cancelled at its timeout
(504, TIMEOUT). Every GraphQL request needs a verified bearer token; the tenant comes from
it alone. A client that accepts `application/graphql-response+json` gets that media type,
and HTTP 400 when the request fails before execution (parse, validation, variables, limits);
others get `application/json` and 200. A tenant over its budget gets 429 with Retry-After.
Every response's `extensions.cost` gives the requested and actual cost and the tenant's
remaining budget; in dev mode `extensions` also reports the request's store calls and
waves, and the worker's document cache (`documentCache`: how this request's document was
found, hits, misses, hit rate).
A mutation POSTed with an Idempotency-Key runs once within the key's window; retries by the
same caller get its first answer, and a request refused before it runs writes nothing for
its key (edge/idempotency.py). A request may name its document by sha256
(keygraph/serve/persisted.py); a GET answer says how long caches may keep it. Each request
logs one line: a warning with its code when it was refused or any error came back, else
info.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import orjson
from graphql import GraphQLError
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send
from strawberry.schema.base import BaseSchema

from keygraph import capacity
from keygraph import deadline as work_deadline
from keygraph.cursor import CursorCodec
from keygraph.serve import graphiql, idempotency_key, persisted
from keygraph.serve.answer import REPLAYED
from keygraph.serve.budget import Budget
from keygraph.serve.deadlines import Deadlines
from keygraph.serve.request_log import log_request
from keygraph.store import Store
from server.auth.tokens import Claims, Verifier
from server.edge import idempotency, request_body
from server.edge.cost_extension import CostExtension
from server.edge.fast_path import CompiledPath
from server.edge.guard import BodyTooLarge, Guard, Refusal
from server.edge.keyed import Keyed
from server.edge.request import GraphQLRequest, posts_json
from server.edge.request_context import RequestContexts
from server.edge.response import refused
from server.edge.result import Results
from server.edge.strawberry_view import StrawberryView
from server.errors import Unauthenticated
from server.graphql.schema import KeygraphSchema
from server.observability import REQUEST_SCOPE_KEY
from server.settings import Limits

GRAPHIQL_QUERY = """# keygraph's GraphiQL: run a query with Ctrl-Enter.
{
  viewer { tenant subject roles }
}
"""
"""GraphiQL's first query: who the page's token names."""


async def _body_problem(request: GraphQLRequest) -> str | None:
    """Why a POST's JSON body cannot be a GraphQL request (edge/request_body.py); None when
    it can, and for other requests (Strawberry's view checks them)."""
    if not posts_json(request):
        return None
    try:
        data = await request.json()
    except orjson.JSONDecodeError:
        return request_body.NOT_JSON
    return request_body.problem(data)


class GraphQLEndpoint:
    """The ASGI endpoint of GraphQL: the edge every request passes (limits, token,
    persisted document, Idempotency-Key, log line), then compiled execution, with
    Strawberry's view for what it declines."""

    def __init__(
        self,
        schema: BaseSchema,
        *,
        store: Store,
        verifier: Verifier,
        cursors: CursorCodec,
        limits: Limits,
        budget: Budget,
        dev: bool,
        graphiql: bool,
        graphiql_authorization: Callable[[], str] | None = None,
        documents: persisted.Documents | None = None,
        get_max_age: int = 0,
        batching: bool = True,
    ) -> None:
        self.schema = schema
        self.verifier = verifier
        self.limits = limits
        self.cost = CostExtension(limits.max_cost, budget)
        contexts = RequestContexts(store, cursors, budget, dev=dev, batching=batching)
        documents_seen = schema.preparation.cache if isinstance(schema, KeygraphSchema) else None
        results = Results(self.cost, dev=dev, documents=documents_seen)
        self.compiled = CompiledPath(schema, contexts, results, limits)
        self.view = StrawberryView(schema, contexts, results)
        self.guard = Guard(limits)
        self.deadlines = Deadlines(limits.request_timeout)
        self.ledger = idempotency.Ledger(store, limits.idempotency_window, limits.request_timeout)
        self._releasing: set[asyncio.Future[None]] = set()
        self.graphiql = graphiql
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
        return refused(request, refusal, self.cost)

    def _log(self, request: GraphQLRequest, response: Response, started: float) -> None:
        """The request's line in the request log (keygraph/serve/request_log.py)."""
        ctx = request.ctx
        counter = ctx.counter if ctx is not None else None
        log_request(
            request_id=request.request_id,
            tenant=request.claims.tenant if request.claims is not None else None,
            operation=ctx.operation_name if ctx is not None else None,
            status=response.status_code,
            code=request.code,
            store_calls=counter.calls if counter is not None else 0,
            store_waves=counter.waves if counter is not None else 0,
            read_units=request.meter.read_units,
            write_units=request.meter.write_units,
            started=started,
        )

    async def _respond(self, request: GraphQLRequest) -> Response:
        if request.method == "GET" and "text/html" in (request.header("accept") or ""):
            # A browser: GraphiQL, with `?query=` (and `&variables=`) in its editors.
            if not self.graphiql:
                return PlainTextResponse("Not Found", status_code=404)
            authorization = self._graphiql_authorization
            token = authorization() if authorization is not None else None
            origin = graphiql.websocket_origin(request.url.scheme, request.header("host") or "")
            return graphiql.page(request.url.path, token, origin, GRAPHIQL_QUERY)
        try:
            claims = self.verifier.verify_header(request.header("authorization"))
        except Unauthenticated as exc:
            return self._refused(request, Refusal(401, Unauthenticated.code, str(exc)))
        request.claims = claims
        response = await self._answer(request, claims)
        if request.method == "GET":
            # A CDN may keep a query's answer, one per Authorization (each caller's own) and
            # Accept (its media type and status follow it).
            ok = response.status_code == 200 and request.code is None
            response.headers["Cache-Control"] = self.get_cache_control if ok else "no-store"
            response.headers["Vary"] = "Authorization, Accept"
        return response

    async def _answer(self, request: GraphQLRequest, claims: Claims) -> Response:
        """The response to a verified request."""
        problem = await _body_problem(request)
        if problem is not None:  # refused before an Idempotency-Key is claimed
            return self._refused(request, Refusal(400, "BAD_REQUEST", problem))
        refused = await self._resolve_persisted(request)
        if refused is not None:
            return self._refused(request, refused)
        key = request.header(idempotency_key.HEADER)
        if key is not None and request.method == "POST":
            return await self._run_once(request, claims, key)
        return await self._execute(request)

    async def _resolve_persisted(self, request: GraphQLRequest) -> Refusal | None:
        """Put the document a persisted operation names in place of the request's query
        (keygraph/serve/persisted.py); why it must not run, if so."""
        if request.method == "GET":
            if "extensions" not in request.query_params and self.documents.trusted is None:
                return None
            try:
                data = request.params()
            except orjson.JSONDecodeError:
                return Refusal(400, "BAD_REQUEST", request_body.NOT_JSON)
        elif posts_json(request):
            data = await request.json()
        else:
            return None
        resolved = persisted.resolve(data, self.documents, self._prepares)
        if resolved is None:
            return None
        if isinstance(resolved, persisted.Refusal):
            return Refusal(resolved.status, resolved.code, resolved.message)
        request.document = resolved
        if request.method == "GET":
            data["query"] = resolved  # Strawberry's view reads it once compiled execution declines
        else:
            # one body for the hash alone and for the hash with its text: an Idempotency-Key's
            # retry by hash is the same request as its first send
            request.replace_json({**data, "query": resolved})
        return None

    async def _run_once(self, request: GraphQLRequest, claims: Claims, given: str) -> Response:
        """A request with an Idempotency-Key: a mutation's first answer, once, to the same
        caller; nothing is written for the key unless a mutation is admitted to run
        (edge/keyed.py, edge/idempotency.py)."""
        if not idempotency_key.valid_key(given):
            message = "Idempotency-Key must be 1 to 255 printable ASCII characters"
            return self._refused(request, Refusal(400, "BAD_REQUEST", message))
        name = idempotency_key.record_name(claims.tenant, claims.caller, given)
        digest = idempotency_key.digest(await request.body())
        keyed = request.keyed = Keyed(self.ledger, claims.tenant, name, digest)
        try:
            response = await self._execute(request)
        except BaseException:
            claim = keyed.claimed
            if claim is not None:
                # cancelled (timeout, shutdown) or failed: a retry runs again, unless it wrote
                release = asyncio.ensure_future(
                    work_deadline.unbounded(self.ledger.fail(claim, keyed.writes))
                )
                self._releasing.add(release)
                release.add_done_callback(self._releasing.discard)
            raise
        outcome = keyed.outcome
        if outcome is None:  # no mutation ran: a query, or a request refused before
            return response
        if isinstance(outcome, idempotency.Refused):
            refusal = Refusal(outcome.status, outcome.code, outcome.message, outcome.retry_after)
            return self._refused(request, refusal)
        if isinstance(outcome, idempotency.Answer):
            request.code = REPLAYED
            headers = {idempotency.REPLAYED: "true"}
            return Response(outcome.body, outcome.status, headers, outcome.media_type)
        media = response.media_type or "application/json"
        answer = idempotency.Answer(response.status_code, media, bytes(response.body))
        await self.ledger.keep(outcome, answer, keyed.writes)
        return response

    async def _execute(self, request: GraphQLRequest) -> Response:
        compiled = await self.compiled.answer(request)
        if compiled is not None:
            return compiled
        return await self.view.answer(request)

    def _prepares(self, query: str) -> bool:
        """Whether `query` parses and validates (within the limits), as it will be run."""
        schema = self.schema
        if not isinstance(schema, KeygraphSchema):
            return True
        try:
            return not schema.preparation.prepared(schema._schema, query).errors
        except GraphQLError:
            return False

"""Any generated package's API over HTTP, as GraphQL-over-HTTP asks: POST JSON, or GET (or
HEAD) for a query, answered as its Accept asks (spoken.py), any other method 405, and
its subscriptions over WebSocket (sockets.py). The tenant and caller come only from the
bearer token (401 UNAUTHENTICATED without a valid one); a body is capped before it is read
(413); an operation is admitted before anything is read (admission.py: limits, cost, the
tenant's budget), and shed past a worker's requests in flight (shedding.py). A request may
name its document by sha256 (persisted.py). A browser asking for /graphql (Accept: text/html)
gets GraphiQL (keygraph.serve.graphiql), offline. A request over HTTP is cut at its
deadline, 504 TIMEOUT (bounded.py), and logged in one JSON line (request_log.py,
learnt.py), its X-Request-Id answered; an answer to an operation reports its cost in
`extensions` (reported.py), and in dev mode its store calls. Metrics (observed.py) and
traces (traced.py) are recorded when Served asks for them, their libraries loaded only
then."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from inspect import isawaitable
from typing import Any

import orjson
from graphql import ExecutionResult, OperationType, execute
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute, request_response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from keygraph.api import ApiContext
from keygraph.api.remembered import Remembering
from keygraph.api.run import in_response_order, release
from keygraph.store import Session, Store
from keygraph.tokens import TokenError, Verified, bearer

from . import graphiql, spoken
from .admission import ALLOWED, Admitted, Refused, admit, persisted_query
from .answer import REPLAYED, Answer, answered, refused
from .answered_errors import answered_errors
from .beside import running_beside
from .bounded import Bounded
from .idempotency import Answered
from .idempotency_key import HEADER, digest, record_name, valid_key
from .learnt import Learnt
from .parted import Stream
from .reported import reported
from .served import MEDIA, Served
from .shedding import Shedding
from .sockets import Places, serve_socket
from .streamed import answer_of, parts_of
from .subscription_limits import SubscriptionLimits
from .written import Written

log = logging.getLogger("keygraph.serve")

METRICS_PATH = "/metrics"
QUERIES = frozenset({OperationType.QUERY})
Params = tuple[str, dict[str, Any] | None, str | None]
"""A request's query, variables and operation name."""
READS_AND_WRITES = frozenset({OperationType.QUERY, OperationType.MUTATION})
READING = frozenset({"GET", "HEAD"})
"""The methods whose parameters are in the URL, and which run queries only."""


class _AnyMethod:
    """An endpoint that takes every method (a Route given a function takes GET alone), so
    /graphql refuses the others itself (_graphql)."""

    def __init__(self, endpoint: Callable[[Request], Awaitable[Response]]) -> None:
        self.app = request_response(endpoint)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def create_app(served: Served) -> Starlette:
    """The app: /graphql over HTTP and WebSocket (and GraphiQL's assets), /healthz, /readyz,
    and /metrics to the bearers of its token; the change stream's hub runs while it does, and
    its tracer provider is shut down when it stops."""
    served = _observed(served)
    observer = None
    if served.metered:  # prometheus_client is loaded only then
        from .observed import Observer

        observer = Observer()
    traced = None
    if served.tracer_provider is not None:  # OpenTelemetry, only then
        from .traced import Traced
        from .tracing import INSTRUMENTATION

        traced = Traced(served.tracer_provider.get_tracer(INSTRUMENTATION))
    bounded, shedding = Bounded(served), Shedding(served)

    async def answer(request: Request, learnt: Learnt) -> Response:
        def run() -> Awaitable[Response]:
            return _graphql(served, request, learnt)

        if traced is None:
            return await bounded.answer(request, learnt, run)
        return await traced.answer(request, learnt, lambda: bounded.answer(request, learnt, run))

    async def observed(request: Request, learnt: Learnt) -> Response:
        def shed() -> Awaitable[Response]:
            return shedding.answer(request, lambda: answer(request, learnt))

        return await (shed() if observer is None else observer.observe(shed))

    async def graphql(request: Request) -> Response:
        learnt = Learnt.of(request, served.store)
        return spoken.spoken(request, await learnt.logged(lambda: observed(request, learnt)))

    places, subscriptions = Places(served.max_connections), SubscriptionLimits(served.subscriptions)

    async def socket(websocket: WebSocket) -> None:
        await serve_socket(websocket, served, places, subscriptions)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        hub = None if served.realtime is None else served.realtime.hub
        if hub is not None:
            await hub.start()
        try:
            async with running_beside(served):
                yield
        finally:
            if hub is not None:
                await hub.stop()
            for close in served.closing:
                await close()
            if served.tracer_provider is not None:
                served.tracer_provider.shutdown()  # sends the spans left

    routes: list[BaseRoute] = [
        Route("/graphql", _AnyMethod(graphql)),
        WebSocketRoute("/graphql", socket),
        Route("/healthz", spoken.healthz),
        Route("/readyz", spoken.readiness(served)),
    ]
    if served.graphiql:
        routes.append(Mount(graphiql.ASSETS_PATH, graphiql.assets()))
    routes.extend(_metrics_routes(served.metrics_token))
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.places, app.state.subscriptions = places, subscriptions
    return app


def _observed(served: Served) -> Served:
    """`served` with its store (and the Idempotency-Key records') observed when metrics or
    traces are on."""
    traced = served.tracer_provider is not None
    if not served.metered and not traced:
        return served
    from .observed_store import ObservedStore

    store = ObservedStore(served.store, served.pattern_of, metered=served.metered, traced=traced)
    ledger = None if served.ledger is None else replace(served.ledger, store=store)
    return replace(served, store=store, ledger=ledger)


async def _graphql(served: Served, request: Request, learnt: Learnt) -> Response:
    """The answer to a request of /graphql, its operation run on the request's store; what
    it learns on the way kept in `learnt`. A failure or a cut after a claim is the caller's
    to give up (bounded.py)."""
    if request.method not in READING and request.method != "POST":
        refusal = refused(405, "BAD_REQUEST", "GraphQL is taken with GET and POST only")
        refusal.headers["Allow"] = ALLOWED
        return refusal
    if request.method == "GET" and "text/html" in request.headers.get("accept", ""):
        return _graphiql(request, served)
    try:
        token = served.verifier.verify(bearer(request.headers.get("authorization")))
    except TokenError as exc:
        return refused(401, "UNAUTHENTICATED", str(exc))
    learnt.tenant = token.tenant
    params = await _params(request, served)
    if isinstance(params, Response):
        return params
    query, variables, name = params
    allowed = QUERIES if request.method in READING else READS_AND_WRITES
    admitted = await admit(served, token.tenant, query, variables, name, allowed)
    if isinstance(admitted, Refused):
        learnt.operation = admitted.operation  # the request log names it
        report = reported(
            served, learnt, token.tenant, admitted.estimate, False, None, admitted.found
        )
        errors = {"errors": admitted.errors, "extensions": report}
        status, body = spoken.as_requested(request, admitted.status, errors)
        refusal = answered(body, status)
        refusal.headers.update(admitted.headers)
        return refusal
    learnt.operation = admitted.operation
    kept = await _claim(served, request, token, params, learnt) if admitted.executor else None
    if kept is not None:  # answered from the key's record: it ran nothing, its points go back
        reported(served, learnt, token.tenant, admitted.estimate, admitted.charged, None, None)
        kept.operation = admitted.operation
        return kept
    store: Store = learnt.store
    if learnt.claim is not None:
        store = learnt.written = Written(store)
    stream = parts_of(served, admitted)
    status, body = await _run(served, store, admitted, token, params, learnt.request_id, stream)
    estimate, charged, found = admitted.estimate, admitted.charged, admitted.found
    data = body.get("data")
    parted = 0 if stream is None else stream.objects()
    body["extensions"] = reported(
        served, learnt, token.tenant, estimate, charged, data, found, parted
    )
    status, body = spoken.as_requested(request, status, body)
    done = answer_of(body, status, stream)
    if learnt.claim is not None and served.ledger is not None:  # a mutation's: in one piece
        codes = {str(e["extensions"]["code"]) for e in body.get("errors", [])}
        sent = bytes(done.body)
        await served.ledger.settle(learnt.claim, status, sent, codes, learnt.maybe_applied)
        learnt.claim = None
    done.operation = admitted.operation
    return done


def _metrics_routes(token: str | None) -> list[BaseRoute]:
    """/metrics, to the bearers of `token`; none without one."""
    if token is None:
        return []

    from .metrics import metrics_response

    async def metrics(request: Request) -> Response:
        return metrics_response(request, token)

    return [Route(METRICS_PATH, metrics)]


async def _claim(
    served: Served, request: Request, token: Verified, params: Params, learnt: Learnt
) -> Answer | None:
    """Claims the record of a mutation sent with an Idempotency-Key (held in `learnt`
    from before it is made); the answer it gets instead (a kept answer, a refusal), or
    None: it runs (without a key, or a query, unclaimed)."""
    given = request.headers.get(HEADER)
    operation = learnt.operation
    mutation = operation is not None and operation.operation is OperationType.MUTATION
    if given is None or not mutation or served.ledger is None:
        return None
    if not valid_key(given):
        message = "an Idempotency-Key is 1 to 255 printable ASCII characters"
        return refused(400, "BAD_REQUEST", message)
    query, variables, name = params
    record = record_name(token.tenant, token.caller, given)
    claim = learnt.claim = served.ledger.claiming(token.tenant, record)
    sent = orjson.dumps({"query": query, "variables": variables, "operationName": name})
    outcome = await served.ledger.claim(claim, digest(sent))
    if isinstance(outcome, Answered):
        learnt.claim = None
        replayed = Answer(outcome.body, outcome.status, outcome.headers, MEDIA)
        replayed.code = REPLAYED
        return replayed
    return None


async def _run(
    served: Served,
    store: Store,
    admitted: Admitted,
    token: Verified,
    params: Params,
    request_id: str,
    stream: Stream | None,
) -> tuple[int, dict[str, Any]]:
    """The operation's status and answer, run on `store` (what it read remembered when the
    table is known; its large lists in `stream`'s parts, when given); an unexpected error
    logged with the request's id, which its answer gives. What it read is not held past its
    answer."""
    _query, variables, name = params
    if served.table is not None:
        store = Remembering(store, served.table)
    session = Session(store, served.cursors.bound_to(token.caller.subject), token.caller)
    context = ApiContext(session, token.tenant, stream=stream)
    executor = admitted.executor
    result: Any
    if executor is None:  # its variables do not coerce: graphql-core reports why
        result = execute(
            served.schema,
            admitted.document,
            context_value=context,
            variable_values=variables,
            operation_name=name,
        )
    else:
        executor.context_value = context
        result = executor.execute_operation()
    if isawaitable(result):
        result = await result
        if admitted.estimate is None or admitted.estimate.cost > served.part_objects:
            await asyncio.sleep(0)  # a large answer's last reads let go before it is sent
    if executor is not None:
        release(executor)
    assert isinstance(result, ExecutionResult)  # no @defer or @stream in a served schema
    located = admitted.located(in_response_order(result))
    errors = answered_errors(located, request_id)
    if result.data is None and all(error.path is None for error in result.errors or ()):
        return 400, {"errors": errors}  # its variables did not coerce
    body: dict[str, Any] = {"data": result.data}
    if errors:
        body["errors"] = errors
    return 200, body


def _graphiql(request: Request, served: Served) -> Response:
    """GraphiQL's page, its headers holding a development token when the app hands them out."""
    if not served.graphiql:
        return PlainTextResponse("Not Found", status_code=404)
    authorization = served.dev_authorization
    origin = graphiql.websocket_origin(request.url.scheme, request.headers.get("host", ""))
    token = authorization() if authorization is not None else None
    return graphiql.page(request.url.path, token, origin)


async def _params(request: Request, served: Served) -> Params | Response:
    """The request's query (a persisted document's when it names one by its hash), variables
    and operation name, or the answer refusing it."""
    raw = await _raw(request, served.max_body_bytes)
    if isinstance(raw, Response):
        return raw
    if not isinstance(raw, dict):
        return refused(400, "BAD_REQUEST", "a request is a JSON object with a query string")
    resolved = persisted_query(served, raw)
    if isinstance(resolved, Refused):
        return answered({"errors": resolved.errors}, resolved.status)
    if resolved is not None:
        raw = {**raw, "query": resolved}
    if not isinstance(raw.get("query"), str):
        return refused(400, "BAD_REQUEST", "a request is a JSON object with a query string")
    variables, name = raw.get("variables"), raw.get("operationName")
    if variables is not None and not isinstance(variables, dict):
        return refused(400, "BAD_REQUEST", "variables must be a JSON object")
    if name is not None and not isinstance(name, str):
        return refused(400, "BAD_REQUEST", "operationName must be a string")
    return raw["query"], variables, name


async def _raw(request: Request, limit: int) -> Any:
    """The request's parameters as sent (GET and HEAD: from the URL, `variables` and
    `extensions` decoded from JSON; a body is not read), or the answer refusing them."""
    if request.method in READING:
        raw: Any = dict(request.query_params)
        for name in ("variables", "extensions"):
            if name in raw:
                try:
                    raw[name] = orjson.loads(raw[name])
                except orjson.JSONDecodeError:
                    return refused(400, "BAD_REQUEST", f"{name} must be a JSON object")
    else:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            return refused(413, "REQUEST_TOO_LARGE", f"a body is at most {limit} bytes")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                return refused(413, "REQUEST_TOO_LARGE", f"a body is at most {limit} bytes")
        try:
            raw = orjson.loads(body)
        except orjson.JSONDecodeError:
            return refused(400, "BAD_REQUEST", "the body must be a JSON object")
    return raw

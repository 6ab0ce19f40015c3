"""GraphQL over HTTP without Strawberry's view, for what compiled execution covers: a POST
of a JSON body, or a GET of a query, whose operation prepares cleanly and compiles. Its
answer is the one the view would give (the same preparation, context, result processing and
response), at a fraction of the cost per request. Anything else (other methods and bodies,
failures before execution, operations the compiler leaves to graphql-core, mutations sent
with GET) is answered by Strawberry's view (edge/strawberry_view.py).

A request goes through it top to bottom: the operation it asks for (edge), prepared,
screened and planned (preparation), run with the request's context (execution), and its
body and response (response)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from graphql import ExecutionResult as GraphQLResult
from graphql import GraphQLError, OperationDefinitionNode, OperationType
from starlette.responses import Response
from strawberry.execution.is_awaitable import optimized_is_awaitable
from strawberry.schema.base import BaseSchema
from strawberry.types import ExecutionResult
from strawberry.utils.await_maybe import await_maybe

from keygraph.api.shape import Estimate
from keygraph.execution.operation import build_executor
from keygraph.execution.plan import OperationPlan
from keygraph.execution.run import Run
from keygraph.serve.literals import Binding
from keygraph.serve.parted import Stream
from server.edge.request import GraphQLRequest
from server.edge.request_context import RequestContexts
from server.edge.response import create_response, create_streamed_response, new_sub_response
from server.edge.result import Results
from server.graphql.compiled.executor import CompiledExecutor
from server.graphql.context import RequestContext
from server.graphql.error_format import log_errors
from server.graphql.prepare import charge
from server.graphql.schema import KeygraphSchema
from server.settings import Limits

_KEYS = frozenset({"query", "variables", "operationName", "extensions"})


@dataclass(slots=True)
class _Requested:
    """The operation a request asks for, as it was sent."""

    query: str
    variables: dict[str, Any] | None
    provided: str | None
    """The operation name the request gives, if any."""
    extensions: dict[str, Any] | None


@dataclass(slots=True)
class _Planned:
    """An operation prepared, screened and planned: ready to run."""

    executor: CompiledExecutor
    plan: OperationPlan
    name: str | None
    estimate: Estimate | None
    literals: Binding | None
    """The request's own literals, where its document ran by its shape's preparation."""


class CompiledPath:
    """Answers what compiled execution serves, with the context, result bodies and
    responses Strawberry's view uses (edge/strawberry_view.py)."""

    def __init__(
        self, schema: BaseSchema, contexts: RequestContexts, results: Results, limits: Limits
    ) -> None:
        self.schema = schema
        self.contexts = contexts
        self.results = results
        self.limits = limits

    async def answer(self, request: GraphQLRequest) -> Response | None:
        """The response to a request compiled execution serves; None for Strawberry's view.
        Once admitted, the operation runs when its context's `before_run` allows it."""
        schema = self.schema
        if (
            not isinstance(schema, KeygraphSchema)
            or not schema.compiled
            or "multipart" in (accept := request.header("accept") or "")
            or "event-stream" in accept
        ):
            return None
        requested = await _requested(request)
        if requested is None:
            return None
        planned = _planned(schema, request, requested)
        if planned is None:
            return None
        ctx = await self._context(request, planned)
        if ctx is None:
            return None  # Strawberry's view answers the same refusal (nothing was charged)
        executor = planned.executor
        executor.context_value = ctx
        try:
            if ctx.before_run is not None and not await ctx.may_run(executor.operation.operation):
                result = GraphQLResult(data=None)  # the endpoint answers instead (edge/keyed.py)
            else:
                result = await await_maybe(Run(executor, planned.plan).start())
        finally:
            executor.release()
        if result.errors:
            log_errors(result.errors, ctx.request_id)
        return self._response(request, ctx, result)

    async def _context(self, request: GraphQLRequest, planned: _Planned) -> RequestContext | None:
        """The request's context, charged to its tenant's budget and reading its result in
        parts when it is large; None when the budget refuses it."""
        ctx = self.contexts.build(request)
        ctx.operation_name, ctx.estimate = planned.name, planned.estimate
        ctx.literals = planned.literals
        if await charge(ctx):
            return None
        limits = self.limits
        if (
            planned.executor.operation.operation is OperationType.QUERY
            and ctx.estimate is not None
            and ctx.estimate.cost > limits.stream_cost
        ):
            ctx.stream = Stream(limits.part_objects, ctx.estimate.shape)
        return ctx

    def _response(
        self, request: GraphQLRequest, ctx: RequestContext, result: GraphQLResult
    ) -> Response:
        """The response to the result: whole, or its data spliced with its parts."""
        sub_response = new_sub_response(request)
        processed = self.results.body(
            request, ExecutionResult(data=result.data, errors=result.errors, extensions={})
        )
        if ctx.stream is None or not ctx.stream.parts:
            return create_response(processed, sub_response)
        return create_streamed_response(processed, ctx.stream, sub_response)


async def _requested(request: GraphQLRequest) -> _Requested | None:
    """The operation a GET's parameters or a POST's JSON body asks for; None when they are
    not a plain GraphQL request (Strawberry's view answers them)."""
    try:
        if request.method == "GET":
            data = request.params()
        elif request.method == "POST" and request.header("content-type") == "application/json":
            data = await request.json()
        else:
            return None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not data.keys() <= _KEYS:
        return None
    query, variables = data.get("query"), data.get("variables")
    provided, extensions = data.get("operationName"), data.get("extensions")
    if (
        not isinstance(query, str)
        or not query
        or not isinstance(variables, dict | None)
        or not isinstance(provided, str | None)
        or not isinstance(extensions, dict | None)
    ):
        return None
    return _Requested(query, variables, provided, extensions)


def _planned(
    schema: KeygraphSchema, request: GraphQLRequest, requested: _Requested
) -> _Planned | None:
    """The operation parsed and validated (cached), screened for the caller and planned;
    None when it fails before execution or the compiler leaves it to graphql-core."""
    query, variables = requested.query, requested.variables
    graphql_schema = schema._schema
    preparation = schema.preparation
    try:
        resolved = preparation.resolve(graphql_schema, query, variables)
    except GraphQLError:
        return None
    request.document_cache = resolved.cache
    name = _operation_name(resolved.prepared.document, requested.provided)
    claims = request.claims
    caller = None if claims is None or claims.unrestricted else claims.caller
    resolved, refused, estimate = preparation.screened(
        graphql_schema, query, resolved, name, variables, caller
    )
    if refused:
        return None  # Strawberry's view answers the same failure, before any planning
    variables = resolved.variables
    document = resolved.prepared.document
    built = build_executor(
        CompiledExecutor,
        graphql_schema,
        document,
        name,
        variables,
        is_awaitable=optimized_is_awaitable,
        operation_extensions=requested.extensions,
    )
    if built is None:
        return None
    kind = built.operation.operation
    plan = None
    if kind is OperationType.QUERY or (
        kind is OperationType.MUTATION and request.method != "GET"  # else 405
    ):
        plan = built.plan()
    if plan is None:
        built.release()  # left to Strawberry's view, which builds its own
        return None
    return _Planned(built, plan, name, estimate, resolved.binding)


def _operation_name(document: Any, provided: str | None) -> str | None:
    """The name Strawberry runs an operation by: the one given, else the first operation's."""
    if provided is not None:
        return provided
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            return definition.name.value if definition.name else None
    return None

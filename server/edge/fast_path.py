"""GraphQL over HTTP without Strawberry's view, for what compiled execution covers: a POST
of a JSON body, or a GET of a query, whose operation prepares cleanly and compiles. Its
answer is the one the view would give (the same preparation, context, result processing and
response), at a fraction of the cost per request. Anything else (other methods and bodies,
failures before execution, operations the compiler leaves to graphql-core, mutations sent
with GET) is answered by Strawberry's view."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from graphql import GraphQLError, OperationDefinitionNode, OperationType
from starlette.responses import Response
from strawberry.types import ExecutionResult
from strawberry.utils.await_maybe import await_maybe

from server.graphql.compiled.operation import build_executor
from server.graphql.compiled.run import Run
from server.graphql.error_format import log_errors
from server.graphql.prepare import charge
from server.graphql.schema import KeygraphSchema
from server.graphql.stream import Stream

if TYPE_CHECKING:
    from server.edge.http import GraphQLEndpoint, GraphQLRequest

_KEYS = frozenset({"query", "variables", "operationName", "extensions"})


def _operation_name(document: Any, provided: str | None) -> str | None:
    """The name Strawberry runs an operation by: the one given, else the first operation's."""
    if provided is not None:
        return provided
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            return definition.name.value if definition.name else None
    return None


async def answer(endpoint: GraphQLEndpoint, request: GraphQLRequest) -> Response | None:
    """The response to a request compiled execution serves; None for Strawberry's view."""
    schema = endpoint.schema
    if (
        not isinstance(schema, KeygraphSchema)
        or not schema.compiled
        or "multipart" in (accept := request.header("accept") or "")
        or "event-stream" in accept
    ):
        return None
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
    graphql_schema = schema._schema
    preparation = schema.preparation
    try:
        resolved = preparation.resolve(graphql_schema, query, variables)
    except GraphQLError:
        return None
    request.document_cache = resolved.cache
    name = _operation_name(resolved.prepared.document, provided)
    claims = request.claims
    caller = None if claims is None or claims.unrestricted else claims.caller
    resolved, refused, estimate = preparation.screened(
        graphql_schema, query, resolved, name, variables, caller
    )
    if refused:
        return None  # Strawberry's view answers the same failure, before any planning
    variables = resolved.variables
    built = build_executor(graphql_schema, resolved.prepared.document, name, variables, extensions)
    kind = None if built is None else built.operation.operation
    if built is None or kind is OperationType.SUBSCRIPTION:
        return None
    if kind is not OperationType.QUERY and request.method == "GET":
        return None  # Strawberry's view refuses it (405)
    plan = built.plan()
    if plan is None:
        return None
    sub_response = await endpoint.get_sub_response(request)
    ctx = await endpoint.get_context(request, sub_response)
    ctx.operation_name, ctx.estimate = name, estimate
    ctx.literals = resolved.binding
    if charge(ctx):
        return None  # Strawberry's view answers the same refusal (nothing was charged)
    limits = endpoint.limits
    if (
        kind is OperationType.QUERY
        and request.idempotency_key is None  # its answer is kept whole
        and ctx.estimate is not None
        and ctx.estimate.cost > limits.stream_cost
    ):
        ctx.stream = Stream(limits.part_objects, ctx.estimate.shape)
    built.context_value = ctx
    result = await await_maybe(Run(built, plan).start())
    if result.errors:
        log_errors(result.errors, ctx.request_id)
    processed = await endpoint.process_result(
        request, ExecutionResult(data=result.data, errors=result.errors, extensions={})
    )
    if ctx.stream is None or not ctx.stream.parts:
        return endpoint.create_response(processed, sub_response)
    return endpoint.create_streamed_response(processed, ctx.stream, sub_response)

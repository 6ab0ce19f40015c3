"""GraphQL over HTTP without Strawberry's view, for what compiled execution covers: a POST
of a JSON body, or a GET of a query, whose operation prepares cleanly and compiles. Its
answer is the one the view would give (the same preparation, context, result processing and
response), at a fraction of the cost per request. Anything else (other methods and bodies,
failures before execution, operations the compiler leaves to graphql-core, mutations sent
with GET) is answered by Strawberry's view."""

from __future__ import annotations

from typing import Any

import orjson
from graphql import GraphQLError, OperationDefinitionNode, OperationType
from starlette.responses import Response
from strawberry.schema.base import BaseSchema
from strawberry.types import ExecutionResult
from strawberry.utils.await_maybe import await_maybe

from server.edge.request import GraphQLRequest
from server.edge.request_context import RequestContexts
from server.edge.response import create_response, create_streamed_response, new_sub_response
from server.edge.result import Results
from server.graphql.compiled.operation import build_executor
from server.graphql.compiled.run import Run
from server.graphql.error_format import log_errors
from server.graphql.prepare import charge
from server.graphql.schema import KeygraphSchema
from server.graphql.stream import Stream
from server.settings import Limits

_KEYS = frozenset({"query", "variables", "operationName", "extensions"})


def _operation_name(document: Any, provided: str | None) -> str | None:
    """The name Strawberry runs an operation by: the one given, else the first operation's."""
    if provided is not None:
        return provided
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            return definition.name.value if definition.name else None
    return None


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
        """The response to a request compiled execution serves; None for Strawberry's view."""
        schema = self.schema
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
            prepared = preparation.prepared(graphql_schema, query)
        except GraphQLError:
            return None
        name = _operation_name(prepared.document, provided)
        claims = request.claims
        caller = None if claims is None or claims.unrestricted else claims.caller
        refused, estimate = preparation.screen(
            graphql_schema, prepared, name, variables or {}, caller
        )
        if refused:
            return None  # Strawberry's view answers the same failure, before any planning
        built = build_executor(graphql_schema, prepared.document, name, variables, extensions)
        kind = None if built is None else built.operation.operation
        if built is None or kind is OperationType.SUBSCRIPTION:
            return None
        if kind is not OperationType.QUERY and request.method == "GET":
            return None  # Strawberry's view refuses it (405)
        plan = built.plan()
        if plan is None:
            return None
        sub_response = new_sub_response(request)
        ctx = self.contexts.build(request)
        ctx.operation_name, ctx.estimate = name, estimate
        if charge(ctx):
            return None  # Strawberry's view answers the same refusal (nothing was charged)
        limits = self.limits
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
        processed = self.results.body(
            request, ExecutionResult(data=result.data, errors=result.errors, extensions={})
        )
        if ctx.stream is None or not ctx.stream.parts:
            return create_response(processed, sub_response)
        return create_streamed_response(processed, ctx.stream, sub_response)

"""A GraphQL result as the body of its response, the same on both execution paths: errors
formatted (the first one's code is the request's), THROTTLED as 429, failures before
execution as request errors, and the extensions: cost, and in dev mode store calls and the
document cache."""

from __future__ import annotations

from typing import Any, cast

from strawberry.http import GraphQLHTTPResponse
from strawberry.types import ExecutionResult
from strawberry.types.execution import PreExecutionError

from keygraph.serve.document_cache import DocumentCache
from server.edge.cost_extension import CostExtension
from server.edge.request import GraphQLRequest
from server.edge.response import GRAPHQL_RESPONSE, wants_graphql_response
from server.graphql.error_format import drop_tracebacks, format_error


class Results:
    """Turns results into response bodies, their status and media type on the request's
    sub-response."""

    def __init__(
        self, cost: CostExtension, *, dev: bool, documents: DocumentCache | None = None
    ) -> None:
        self.cost = cost
        self.dev = dev
        self.documents = documents

    def body(self, request: GraphQLRequest, result: ExecutionResult) -> GraphQLHTTPResponse:
        """The body of `result`'s response (the context's loaders are closed first)."""
        ctx, sub_response = request.ctx, request.sub_response
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
        modern = wants_graphql_response(request)
        body: dict[str, Any] = {}
        if not (modern and before_execution):
            body["data"] = result.data
        if result.errors:
            errors = result.errors if ctx.literals is None else ctx.literals.rebase(result.errors)
            body["errors"] = [format_error(error, ctx.request_id) for error in errors]
            drop_tracebacks(result.errors)
            request.code = body["errors"][0]["extensions"]["code"]
            codes = {error["extensions"]["code"] for error in body["errors"]}
            admission = ctx.admission  # the budget refused it: no store throttled a field
            if "THROTTLED" in codes and admission is not None and not admission.admitted:
                request.code = "THROTTLED"
                sub_response.status_code = 429
                sub_response.headers["Retry-After"] = str(admission.retry_after)
        extensions = dict(result.extensions or {})
        extensions["cost"] = self.cost(request, result.data)
        if self.dev and ctx.counter is not None:
            extensions.update(storeCalls=ctx.counter.calls, storeWaves=ctx.counter.waves)
        if self.documents is not None and ctx.document_cache is not None:
            self.documents.count(ctx.document_cache)
            if self.dev:
                extensions["documentCache"] = {
                    "request": ctx.document_cache,
                    **self.documents.report(),
                }
        body["extensions"] = extensions
        if modern:
            sub_response.media_type = GRAPHQL_RESPONSE
            if before_execution and sub_response.status_code != 429:
                sub_response.status_code = 400
        return cast(GraphQLHTTPResponse, body)

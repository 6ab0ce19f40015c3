"""Strawberry's ASGI view, the fallback beside compiled execution (edge/fast_path.py): it
answers what the compiled path declines (other methods and bodies, failures before
execution, operations the compiler leaves to graphql-core, mutations sent with GET). Its
context, result bodies and responses are the compiled path's own, so both answer alike."""

from __future__ import annotations

from typing import Any

from cross_web import HTTPException
from starlette.datastructures import QueryParams
from starlette.responses import Response
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLHTTPResponse
from strawberry.schema.base import BaseSchema
from strawberry.types import ExecutionResult

from server.edge.guard import Refusal
from server.edge.request import GraphQLRequest, own
from server.edge.request_context import RequestContexts
from server.edge.response import FastJSON, create_response, new_sub_response, refused
from server.edge.result import Results
from server.graphql.context import RequestContext


class StrawberryView(FastJSON, GraphQL[RequestContext, None]):
    """The view, over the endpoint's requests (edge/request.py), never serving a page."""

    def __init__(self, schema: BaseSchema, contexts: RequestContexts, results: Results) -> None:
        super().__init__(
            schema, graphql_ide=None, allow_queries_via_get=True, subscription_protocols=()
        )
        self.contexts = contexts
        self.results = results

    async def answer(self, request: GraphQLRequest) -> Response:
        """The response to a verified request, its refusals as the endpoint's own."""
        if request.method == "GET" and request.document is not None:
            params = dict(request.query_params)
            params["query"] = request.document
            request._query_params = QueryParams(params)
        try:
            return await self.run(request)
        except HTTPException as exc:
            cost = self.results.cost
            if request.method == "GET" and "mutation" in exc.reason:
                # GraphQL over HTTP: a mutation sent with GET is 405, to be retried as POST
                response = refused(request, Refusal(405, "BAD_REQUEST", exc.reason), cost)
                response.headers["Allow"] = "POST"
                return response
            return refused(request, Refusal(exc.status_code, "BAD_REQUEST", exc.reason), cost)

    def should_render_graphql_ide(self, request: Any) -> bool:
        """Never here: a browser gets the endpoint's own page before (edge/http.py), and any
        other GET without a `query` (`Accept: */*`, a persisted query's odd parameters) is a
        request naming no operation, not one for Strawberry's page."""
        return False

    async def get_sub_response(self, request: Any) -> Response:
        return new_sub_response(own(request))

    async def get_context(self, request: Any, response: Any) -> RequestContext:
        return self.contexts.build(own(request))

    async def process_result(self, request: Any, result: ExecutionResult) -> GraphQLHTTPResponse:
        return self.results.body(own(request), result)

    def create_response(
        self, response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse], sub_response: Response
    ) -> Response:
        return create_response(response_data, sub_response)

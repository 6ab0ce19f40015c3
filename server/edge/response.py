"""The HTTP response of a GraphQL request, the same on both execution paths: its body
encoded through orjson, its status, media type and headers decided while the result is
processed (a sub-response) and carried onto it; and the error response of a request
refused before or instead of running."""

from __future__ import annotations

import orjson
from starlette.responses import Response
from strawberry.http import GraphQLHTTPResponse

from keygraph.serve.parted import Stream
from keygraph.serve.streamed import StreamedResponse
from server.edge.cost_extension import CostExtension
from server.edge.guard import Refusal
from server.edge.request import GraphQLRequest

GRAPHQL_RESPONSE = "application/graphql-response+json"


def encode(data: object) -> bytes:
    """A response body as JSON."""
    return orjson.dumps(data)


class FastJSON:
    """Request and response bodies through orjson: several times faster than the standard
    library on large responses. Mixed into a Strawberry view before its base class."""

    def decode_json(self, data: str | bytes) -> object:
        return orjson.loads(data)

    def encode_json(self, data: object) -> bytes:
        return encode(data)


def wants_graphql_response(request: GraphQLRequest) -> bool:
    """Whether the client accepts `application/graphql-response+json`."""
    return GRAPHQL_RESPONSE in (request.header("accept") or "")


def refused(request: GraphQLRequest, refusal: Refusal, cost: CostExtension) -> Response:
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
        "extensions": {"cost": cost(request, None)},
    }
    media = GRAPHQL_RESPONSE if wants_graphql_response(request) else "application/json"
    return Response(
        orjson.dumps(body), status_code=refusal.status, media_type=media, headers=headers
    )


class SubResponse(Response):
    """What result processing decides before the response exists: a status, a media type,
    headers. Nothing is rendered, and headers are parsed only once one is set."""

    def __init__(self) -> None:
        self.status_code = None  # type: ignore[assignment]
        self.media_type = None
        self.raw_headers = []
        self.body = b""
        self.background = None


def with_headers(response: Response, sub_response: Response) -> Response:
    """`response` with the headers result processing set."""
    if sub_response.raw_headers:
        for name, value in sub_response.headers.items():
            if name.lower() not in ("content-type", "content-length"):
                response.headers.append(name, value)
    return response


def new_sub_response(request: GraphQLRequest) -> SubResponse:
    """The request's sub-response, kept on it as `request.sub_response`."""
    sub_response = SubResponse()
    request.sub_response = sub_response
    return sub_response


def create_response(
    response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse], sub_response: Response
) -> Response:
    """The response of a result processed whole."""
    response = Response(
        encode(response_data),
        status_code=sub_response.status_code or 200,
        media_type=sub_response.media_type or "application/json",
    )
    return with_headers(response, sub_response)


def create_streamed_response(
    response_data: GraphQLHTTPResponse, stream: Stream, sub_response: Response
) -> Response:
    """The response of a result read in parts: its data spliced with the parts' pieces
    as they are sent (keygraph/serve/parted.py)."""
    length, pieces = stream.body(encode(response_data))
    response = StreamedResponse(
        length,
        pieces,
        status_code=sub_response.status_code or 200,
        media_type=sub_response.media_type or "application/json",
    )
    return with_headers(response, sub_response)

"""The peer's ASGI app: its GraphQL view at /graphql and the bench's /healthz probe."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bench.peer.models import bind
from bench.peer.schema import PeerGraphQL
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_SECRET


def peer_app(endpoint: str, tenant: str, table: str) -> Starlette:
    """The peer serving `tenant`'s items of `table` on DynamoDB Local at `endpoint`."""
    bind(endpoint, table, LOCAL_KEY_ID, LOCAL_SECRET)

    async def healthz(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(routes=[Route("/healthz", healthz), Route("/graphql", PeerGraphQL(tenant))])

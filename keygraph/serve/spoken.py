"""How `keygraph serve` speaks HTTP on /graphql, as the GraphQL-over-HTTP spec and RFC 9110
ask: the media type the client's Accept names (application/graphql-response+json unless it
names application/json alone), a request error (parse, validation, variables, limits) 400
with no data to the first and 200 with `data: null` to the second, WWW-Authenticate with a
401, and Cache-Control and Vary on a query's answer to GET or HEAD; and /healthz, /readyz."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from keygraph.errors import StoreError
from keygraph.plan import Get

from .answer import OK, Answer
from .served import MEDIA, Served

JSON = "application/json"
CACHED = "private, max-age=0"
"""A query's answer to GET: the caller's own, kept by no shared cache, to check again."""
UNCACHED = "no-store"
"""A GET refused or answered with errors: kept by no cache."""
READY_TIMEOUT = 5.0
"""Seconds /readyz waits for the store before it answers 503."""
PROBE = "~KEYGRAPH#READY"
"""The partition /readyz reads, which no item uses (idempotency.PREFIX says why); the stack's
policy allows GetItem there (codegen/iam.py READY)."""


def legacy(request: Request) -> bool:
    """Whether the client takes application/json and not application/graphql-response+json:
    it is answered in the first. A client naming neither (no Accept, `*/*`) gets the second,
    as the spec asks since its watershed of 1 January 2025."""
    named = set()
    for part in request.headers.get("accept", "").split(","):
        media, *parameters = part.split(";")
        if not any(_refused(parameter) for parameter in parameters):
            named.add(media.strip().lower())
    return JSON in named and MEDIA not in named


def _refused(parameter: str) -> bool:
    """Whether a media range's parameter is `q=0`: the client takes none of it."""
    name, _, value = parameter.strip().partition("=")
    if name.strip().lower() != "q":
        return False
    try:
        return float(value) == 0
    except ValueError:
        return False


def as_requested(request: Request, status: int, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A request error's status and body (`status` 400: it did not run) as its client takes
    it: 400 and no data in application/graphql-response+json, 200 and `data: null` in
    application/json; any other status as it is."""
    if status != 400 or not legacy(request):
        return status, body
    return 200, {"data": None, **body}


def spoken(request: Request, response: Response) -> Response:
    """`response` to /graphql with the headers its client is owed: its media type,
    WWW-Authenticate with a 401, and a GET's or HEAD's Cache-Control and Vary (GraphiQL's
    page is left as it is)."""
    if not isinstance(response, Answer):
        return response
    if legacy(request):
        response.headers["content-type"] = JSON
    if response.status_code == 401:
        response.headers["WWW-Authenticate"] = "Bearer"
    if request.method in ("GET", "HEAD"):
        ok = response.status_code == 200 and response.code == OK
        response.headers["Cache-Control"] = CACHED if ok else UNCACHED
        response.headers["Vary"] = "Authorization, Accept"
    return response


async def healthz(_request: Request) -> Response:
    """The process answers."""
    return JSONResponse({"status": "ok"})


def readiness(served: Served) -> Any:
    """/readyz: 200 once the store answers a read, else 503 naming why (a balancer's check)."""
    table = None if served.ledger is None else served.ledger.table
    key = None if table is None else {table.partition_key: PROBE, table.sort_key: PROBE}

    async def readyz(_request: Request) -> Response:
        if key is not None:
            try:
                async with asyncio.timeout(min(READY_TIMEOUT, served.request_timeout)):
                    await served.store.get(Get(key=key))
            except (StoreError, OSError, TimeoutError) as exc:
                reason = type(exc).__name__
                return JSONResponse({"status": "unavailable", "reason": reason}, 503)
        return JSONResponse({"status": "ready"})

    return readyz

"""What one worker refuses before a request is read: a GET whose query string is longer than
Served.max_query_string (414), and any request once Served.max_in_flight run at once (503
OVERLOADED with Retry-After, shed rather than queued, so a burst cannot pile up work that
would time out anyway)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from .answer import refused
from .served import Served

RETRY_AFTER = "1"
"""Seconds a shed request's client is told to wait before it retries."""


class Shedding:
    """One app's count of requests in flight, and its refusals."""

    def __init__(self, served: Served) -> None:
        self.max_query_string = served.max_query_string
        self.max_in_flight = served.max_in_flight
        self.in_flight = 0

    async def answer(self, request: Request, answer: Callable[[], Awaitable[Response]]) -> Response:
        """`answer()`'s response, counted in flight, or the refusal of a request that must
        not run."""
        length = len(request.scope.get("query_string", b""))
        if length > self.max_query_string:
            message = (
                f"the query string has {length} bytes, at most {self.max_query_string}; "
                "send long queries with POST"
            )
            return refused(414, "REQUEST_TOO_LARGE", message)
        if self.in_flight >= self.max_in_flight:
            message = f"the server is running {self.in_flight} requests, its most; retry shortly"
            shed = refused(503, "OVERLOADED", message)
            shed.headers["Retry-After"] = RETRY_AFTER
            return shed
        self.in_flight += 1
        try:
            return await answer()
        finally:
            self.in_flight -= 1

"""Limits on a request before it is read or run: its body size (the Content-Length header
first, then the bytes as they stream in, cut off at the limit), its query string, and the
requests a worker runs at once (more are shed with 503 rather than queued)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from starlette.types import Message, Receive, Scope

from server.settings import Limits


class BodyTooLarge(Exception):
    """The request body grew past the limit while it was being read."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is refused before it runs: HTTP status, error code and message."""

    status: int
    code: str
    message: str
    retry_after: int | None = None


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class Guard:
    """One worker's request limits and its count of requests in flight."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.in_flight = 0

    def refuse(self, scope: Scope) -> Refusal | None:
        """A refusal for a request that must not run, from its headers alone."""
        length = _content_length(scope)
        if length is not None and length > self.limits.max_body_bytes:
            return Refusal(
                413,
                "REQUEST_TOO_LARGE",
                f"the request body has {length} bytes, at most {self.limits.max_body_bytes}",
            )
        query_string = scope.get("query_string", b"")
        if len(query_string) > self.limits.max_query_string:
            return Refusal(
                414,
                "REQUEST_TOO_LARGE",
                f"the query string has {len(query_string)} bytes, "
                f"at most {self.limits.max_query_string}; send long queries with POST",
            )
        if self.in_flight >= self.limits.max_in_flight:
            return Refusal(
                503,
                "OVERLOADED",
                f"the server is running {self.in_flight} requests, its most; retry shortly",
                retry_after=1,
            )
        return None

    @contextmanager
    def running(self) -> Iterator[None]:
        """Counts a request in flight while the block runs."""
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1

    def receive(self, receive: Receive) -> Receive:
        """`receive`, raising BodyTooLarge as soon as the body passes the limit: the rest is
        never read."""
        limit = self.limits.max_body_bytes
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(f"the request body passed {limit} bytes")
            return message

        return limited

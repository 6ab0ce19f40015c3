"""How errors reach clients: each gets its `extensions.code`, and anything unexpected is
masked as INTERNAL (logged with the request id, never shown with its message or traceback)."""

from __future__ import annotations

import logging
from typing import Any

import pydantic
from graphql import GraphQLError

from keygraph.errors import (
    BadArgument,
    Conflict,
    Forbidden,
    IdempotentParameterMismatch,
    InvalidCursor,
    NotFound,
    StoreThrottled,
    StoreUnavailable,
)
from server.errors import ApiError, IdempotencyKeyReused, described

log = logging.getLogger("keygraph.errors")

INTERNAL_MESSAGE = "Internal server error"

STORE_RETRY_AFTER = 1
"""Seconds a client is told to wait after the store throttled its request."""


def classify(error: GraphQLError) -> tuple[str, str, dict[str, Any]]:
    """(code, client message, extensions) of an error raised anywhere in a request."""
    original = error.original_error
    if original is None:
        extensions = dict(error.extensions or {})
        code = str(extensions.pop("code", "GRAPHQL_VALIDATION_FAILED"))
        return code, error.message, extensions
    if isinstance(original, ApiError):
        extensions = dict(original.extensions)
        return str(extensions.pop("code")), str(original), extensions
    if isinstance(original, pydantic.ValidationError):
        return "BAD_USER_INPUT", described(original), {}
    if isinstance(original, Forbidden):
        return "FORBIDDEN", f"not allowed to run {original}", {}
    if isinstance(original, BadArgument):
        return "BAD_USER_INPUT", str(original), {}
    if isinstance(original, InvalidCursor):
        return "INVALID_CURSOR", str(original), {}
    if isinstance(original, NotFound):
        return "NOT_FOUND", str(original), {}
    if isinstance(original, Conflict):
        version = original.current_version
        return "CONFLICT", str(original), {} if version is None else {"currentVersion": version}
    if isinstance(original, IdempotentParameterMismatch):
        message = "a request with this Idempotency-Key already wrote other data"
        return IdempotencyKeyReused.code, message, {}
    if isinstance(original, StoreThrottled):
        message = "the data store is throttling requests, try again shortly"
        return "THROTTLED", message, {"retryAfter": STORE_RETRY_AFTER}
    if isinstance(original, StoreUnavailable):
        return "STORE_UNAVAILABLE", "the data store is unavailable, try again", {}
    return "INTERNAL", INTERNAL_MESSAGE, {}


def format_error(error: GraphQLError, request_id: str | None) -> dict[str, Any]:
    """The error as the client sees it: message, locations, path and extensions.code."""
    code, message, extensions = classify(error)
    formatted: dict[str, Any] = {"message": message}
    if error.locations:
        formatted["locations"] = [loc._asdict() for loc in error.locations]
    if error.path is not None:
        formatted["path"] = error.path
    formatted["extensions"] = {"code": code, **extensions}
    if code == "INTERNAL" and request_id is not None:
        formatted["extensions"]["requestId"] = request_id
    return formatted


def drop_tracebacks(errors: list[GraphQLError]) -> None:
    """Let go of the errors' tracebacks, and those of the exceptions behind them, once
    logged: a traceback holds the frames that raised, which hold the error, a reference
    cycle that would keep a request's objects until the cycle collector runs."""
    pending: list[BaseException | None] = list(errors)
    seen: set[int] = set()
    while pending:
        error = pending.pop()
        if error is None or id(error) in seen:
            continue
        seen.add(id(error))
        error.__traceback__ = None
        pending += (error.__cause__, error.__context__)
        if isinstance(error, GraphQLError):
            pending.append(error.original_error)


EXPECTED_FAILURES = frozenset({"STORE_UNAVAILABLE", "TIMEOUT", "THROTTLED"})
"""Codes of failures that are not the client's doing but are handled, not bugs: logged as
warnings, without a traceback."""


def log_errors(errors: list[GraphQLError], request_id: str | None) -> None:
    """Log bugs (INTERNAL) as errors with their traceback, and expected failures as
    warnings with their code; the client's own mistakes are in the request log line."""
    for error in errors:
        code = classify(error)[0]
        where = ".".join(str(part) for part in error.path or ()) or "request"
        if code == "INTERNAL":
            original = error.original_error or error
            log.error(
                "unexpected error in %s",
                where,
                exc_info=(type(original), original, original.__traceback__),
                extra={"request_id": request_id, "code": code},
            )
        elif code in EXPECTED_FAILURES:
            log.warning(
                "%s in %s: %s",
                code,
                where,
                error.original_error or error.message,
                extra={"request_id": request_id, "code": code},
            )

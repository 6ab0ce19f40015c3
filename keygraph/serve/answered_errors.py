"""An operation's errors as `keygraph serve` answers them: each with its code, a bug's
(INTERNAL) logged with its traceback and given the request's id to quote; then each error's
traceback let go, whose frames hold the error, and with it what the request read, in a
reference cycle until the cycle collector runs."""

from __future__ import annotations

import logging
from typing import Any

from graphql import GraphQLError

from keygraph.api.run import error_code, formatted

errors_log = logging.getLogger("keygraph.errors")


def answered_errors(errors: list[GraphQLError], request_id: str) -> list[dict[str, Any]]:
    """The errors as answered, logged first when they are bugs; their tracebacks let go."""
    shown = [_formatted(error, request_id) for error in errors]
    _drop_tracebacks(errors)
    return shown


def _formatted(error: GraphQLError, request_id: str) -> dict[str, Any]:
    """An error as answered; a bug's (INTERNAL) logged with its traceback, and its
    answer's extensions given the request's id to quote."""
    shown = formatted(error)
    if error_code(error) == "INTERNAL":
        cause = error.original_error or error
        where = ".".join(map(str, error.path or ())) or "request"
        errors_log.error(
            "unexpected error in %s",
            where,
            exc_info=(type(cause), cause, cause.__traceback__),
            extra={"request_id": request_id, "code": "INTERNAL"},
        )
        shown["extensions"]["requestId"] = request_id
    return shown


def _drop_tracebacks(errors: list[GraphQLError]) -> None:
    """Lets go of the errors' tracebacks, and those of the exceptions behind them."""
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

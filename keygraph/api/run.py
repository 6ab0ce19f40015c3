"""Running an operation on a generated package's API: the answer as JSON-ready data, each
error with its `extensions.code` (the server's codes: FORBIDDEN for a guard's refusal,
BAD_USER_INPUT for an argument no key can hold or a value its model refuses, NOT_FOUND and
CONFLICT (with `currentVersion`) for a write the table refuses, INVALID_CURSOR,
THROTTLED (with `retryAfter`) for a store call throttled past its retries,
STORE_UNAVAILABLE, SUBSCRIBER_TOO_SLOW for a subscriber that fell too far behind, and
INTERNAL, its message masked, for anything else)."""

from __future__ import annotations

from typing import Any

import orjson
from graphql import ExecutionResult, GraphQLError, GraphQLSchema, graphql
from graphql.execution import Executor

from keygraph.errors import (
    BadArgument,
    Conflict,
    Forbidden,
    InvalidCursor,
    NotFound,
    StoreThrottled,
    StoreUnavailable,
)
from keygraph.execution.executor import CompiledExecutor

from .executable import ApiContext
from .watches import SubscriberTooSlow

STORE_RETRY_AFTER = 1
"""Seconds a THROTTLED field error asks the client to wait before trying again."""

CODES: tuple[tuple[type[Exception], str], ...] = (
    (Forbidden, "FORBIDDEN"),
    (InvalidCursor, "INVALID_CURSOR"),
    (BadArgument, "BAD_USER_INPUT"),
    (NotFound, "NOT_FOUND"),
    (Conflict, "CONFLICT"),
    (StoreThrottled, "THROTTLED"),
    (StoreUnavailable, "STORE_UNAVAILABLE"),
    (SubscriberTooSlow, "SUBSCRIBER_TOO_SLOW"),
)


def error_code(error: GraphQLError) -> str:
    """The code an error answers with: its cause's, the one it was made with (a refusal
    by the tenant's budget: THROTTLED), or a document's own (validation)."""
    cause = error.original_error
    own = (error.extensions or {}).get("code")
    if cause is None and isinstance(own, str):
        return own
    if cause is None:
        variable = error.message.startswith("Variable '$")
        return "BAD_USER_INPUT" if variable or error.path else "GRAPHQL_VALIDATION_FAILED"
    for kind, code in CODES:
        if isinstance(cause, kind):
            return code
    if isinstance(cause, GraphQLError):  # a scalar's or an enum's refusal
        return "BAD_USER_INPUT"
    return "INTERNAL"


def formatted(error: GraphQLError) -> dict[str, Any]:
    code = error_code(error)
    shown: dict[str, Any] = dict(error.formatted)
    if code == "INTERNAL":
        shown["message"] = "internal error"
    shown["extensions"] = {**shown.get("extensions", {}), "code": code}
    cause = error.original_error
    if isinstance(cause, Conflict) and cause.current_version is not None:
        shown["extensions"]["currentVersion"] = cause.current_version
    if isinstance(cause, StoreThrottled):
        shown["extensions"]["retryAfter"] = STORE_RETRY_AFTER
    return shown


async def execute(
    schema: GraphQLSchema,
    document: str,
    context: ApiContext,
    variables: dict[str, Any] | None = None,
    operation: str | None = None,
    compiled: bool = True,
) -> dict[str, Any]:
    """The operation's answer: `data`, and `errors` when any, each with its code. It runs
    compiled (keygraph/execution) unless `compiled` is False: graphql-core's own executor,
    which answers the same."""
    result = await graphql(
        schema,
        document,
        context_value=context,
        variable_values=variables,
        operation_name=operation,
        executor_class=CompiledExecutor if compiled else None,
    )
    answer: dict[str, Any] = {"data": result.data}
    if result.errors:
        answer["errors"] = [formatted(error) for error in in_response_order(result)]
    return answer


def release(executor: Executor[Any]) -> None:
    """The executor, once it has run, lets go of the request's context and of the helpers
    graphql-core gave it: they hold its own bound methods, a cycle that would keep it and
    what the request read until the cycle collector runs."""
    executor.context_value = None
    executor.__dict__.pop("async_helpers", None)


def in_response_order(result: ExecutionResult) -> list[GraphQLError]:
    """The result's errors in the order of the places they name in its data (those naming
    none first), whatever order the reads that raised them finished in."""
    errors = result.errors or []
    if len(errors) < 2:
        return list(errors)
    keys: dict[int, dict[str, int]] = {}  # each object's keys by position, found once
    return sorted(errors, key=lambda error: _place(result.data, error.path, keys))


def _place(
    data: Any, path: list[str | int] | None, keys: dict[int, dict[str, int]]
) -> tuple[int, ...]:
    """Where a path points in the data, as positions: a key's among its object's keys, an
    item's index; past a place the data does not hold (nulled), the path's own order, and
    in a list read in parts (already serialized: keygraph/serve/parted.py) its items'."""
    if path is None:
        return (-1,)
    places: list[int] = []
    value = data
    for step in path:
        if isinstance(value, orjson.Fragment):
            places.extend(step if isinstance(step, int) else 0 for step in path[len(places) :])
            break
        if isinstance(value, dict) and step in value:
            found = keys.get(id(value))
            if found is None:
                found = keys[id(value)] = {key: at for at, key in enumerate(value)}
            places.append(found[step])  # type: ignore[index]
            value = value[step]
        elif isinstance(value, list) and isinstance(step, int) and step < len(value):
            places.append(step)
            value = value[step]
        else:
            places.append(len(value) if isinstance(value, dict | list) else 0)
            value = None
    return tuple(places)

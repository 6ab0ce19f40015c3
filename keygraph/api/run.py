"""Running an operation on a generated package's API: the answer as JSON-ready data, each
error with its `extensions.code` (the server's codes: FORBIDDEN for a guard's refusal,
BAD_USER_INPUT for an argument no key can hold or a value its model refuses, NOT_FOUND and
CONFLICT (with `currentVersion`) for a write the table refuses, INVALID_CURSOR,
STORE_UNAVAILABLE, and INTERNAL, its message masked, for anything else)."""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError, GraphQLSchema, graphql

from keygraph.errors import (
    BadArgument,
    Conflict,
    Forbidden,
    InvalidCursor,
    NotFound,
    StoreUnavailable,
)

from .executable import ApiContext

CODES: tuple[tuple[type[Exception], str], ...] = (
    (Forbidden, "FORBIDDEN"),
    (InvalidCursor, "INVALID_CURSOR"),
    (BadArgument, "BAD_USER_INPUT"),
    (NotFound, "NOT_FOUND"),
    (Conflict, "CONFLICT"),
    (StoreUnavailable, "STORE_UNAVAILABLE"),
)


def error_code(error: GraphQLError) -> str:
    """The code an error answers with: its cause's, or a document's own (validation)."""
    cause = error.original_error
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
    return shown


async def execute(
    schema: GraphQLSchema,
    document: str,
    context: ApiContext,
    variables: dict[str, Any] | None = None,
    operation: str | None = None,
) -> dict[str, Any]:
    """The operation's answer: `data`, and `errors` when any, each with its code."""
    result = await graphql(
        schema, document, context_value=context, variable_values=variables, operation_name=operation
    )
    answer: dict[str, Any] = {"data": result.data}
    if result.errors:
        answer["errors"] = [formatted(error) for error in result.errors]
    return answer

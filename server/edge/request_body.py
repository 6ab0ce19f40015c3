"""What a POST's JSON body must be before an Idempotency-Key is claimed or Strawberry's view
reads it: JSON, one operation, as an object whose `operationName` is a string when given.
Anything else is answered with HTTP 400 and BAD_REQUEST (the view would fail on a JSON body
that is no object with a 500, and take a name that is no string for one)."""

from __future__ import annotations

_KINDS = {str: "a string", int: "a number", float: "a number", bool: "a boolean"}
NOT_JSON = "Unable to parse request body as JSON"
"""Strawberry's own words for a body or parameter that is no JSON (or no UTF-8)."""


def problem(data: object) -> str | None:
    """Why a decoded body cannot be a GraphQL request; None when it can."""
    if isinstance(data, list):
        return (
            "batched requests (a JSON array of operations) are not supported: "
            "send one operation per request"
        )
    if not isinstance(data, dict):
        kind = "null" if data is None else _KINDS.get(type(data), type(data).__name__)
        return f"the request body must be a JSON object, not {kind}"
    name = data.get("operationName")
    if name is not None and not isinstance(name, str):
        return "the GraphQL operation's `operationName` must be a string or null, if provided"
    return None

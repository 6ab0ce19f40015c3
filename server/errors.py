"""The domain's refusals, each with the code the API answers it with
(server/extension/refusals.py)."""

from __future__ import annotations

from typing import Any, ClassVar

import pydantic


class ApiError(Exception):
    """An error meant for the client: its message is shown, its code goes in extensions."""

    code: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, **extensions: Any) -> None:
        super().__init__(message)
        self.extensions: dict[str, Any] = {"code": self.code, **extensions}


class Forbidden(ApiError):
    """The caller may not do or read this (the spec's access rules, generated/authz.py)."""

    code = "FORBIDDEN"


class BadUserInput(ApiError):
    code = "BAD_USER_INPUT"


class NotFound(ApiError):
    code = "NOT_FOUND"


class Conflict(ApiError):
    code = "CONFLICT"


def described(error: pydantic.ValidationError) -> str:
    """A model's refusal of a client's values as the client is told it: each value's place
    and why, never the value itself."""
    problems = [
        f"{'.'.join(str(part) for part in detail['loc']) or 'value'}: {detail['msg']}"
        for detail in error.errors(include_url=False)
    ]
    return "invalid input: " + "; ".join(problems)

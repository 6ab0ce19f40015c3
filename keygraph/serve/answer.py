"""A response to /graphql with what metrics and traces record of it (observed.py,
traced.py), kept apart from them so that an app observing nothing loads neither
prometheus_client nor OpenTelemetry."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from graphql import OperationDefinitionNode
from starlette.responses import Response

OK = "OK"
"""The code of a request answered without errors."""
REPLAYED = "REPLAYED"
"""The code of an Idempotency-Key's retry, answered as the first time."""


class Answer(Response):
    """A response to /graphql, with what the metrics record of it: the code that decided it,
    its errors' codes, and the operation it ran."""

    code: str = OK
    errors: tuple[str, ...] = ()
    operation: OperationDefinitionNode | None = None

    def with_errors(self, errors: Iterable[Any]) -> Answer:
        """This answer, its errors (a body's `errors`) counted by code."""
        self.errors = tuple(str(e.get("extensions", {}).get("code", "")) for e in errors)
        if self.errors:
            self.code = self.errors[0]
        return self


def outcome(response: Response | None) -> tuple[int, str, OperationDefinitionNode | None]:
    """A /graphql response's status, the code that decided it (OK, an error's, or
    HTTP_<status>), and the operation it ran; None, a response never made, is a 500."""
    status = 500 if response is None else response.status_code
    if isinstance(response, Answer):
        return status, response.code, response.operation
    return status, OK if status < 400 else f"HTTP_{status}", None


def operation_name(operation: OperationDefinitionNode | None) -> str | None:
    """The name an operation was given, if any."""
    return operation.name.value if operation is not None and operation.name else None

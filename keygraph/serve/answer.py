"""A response to /graphql with what metrics, traces and the request log record of it
(observed.py, traced.py, request_log.py), kept apart from them so that an app observing
nothing loads neither prometheus_client nor OpenTelemetry; and the answers of one error."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from graphql import OperationDefinitionNode
from starlette.responses import Response

from .served import MEDIA

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


def answered(body: Mapping[str, Any], status: int = 200) -> Answer:
    """`body` as an answer, its errors counted."""
    answer = Answer(orjson.dumps(body), status_code=status, media_type=MEDIA)
    return answer.with_errors(body.get("errors", ()))


def refused(status: int, code: str, message: str, **extensions: Any) -> Answer:
    """An answer of one error, `code` and `extensions` in its extensions."""
    shown = {"code": code, **extensions}
    return answered({"errors": [{"message": message, "extensions": shown}]}, status)

"""A response to /graphql with what metrics record of it (metrics.py, observed.py), kept
apart from them so that an app without metrics loads none of prometheus_client."""

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

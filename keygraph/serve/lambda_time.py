"""What an AWS Lambda invocation leaves a request: its time, less what the answer needs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LAMBDA_MARGIN_SECONDS = 1.0
"""Of an invocation's time, what a request leaves for its 504 answer and its spans."""


def invocation_time_left(scope: Mapping[str, Any]) -> float | None:
    """The seconds the invocation answering the request (its ASGI scope's `aws.context`,
    Mangum's) leaves it, less LAMBDA_MARGIN_SECONDS; None without one."""
    context = scope.get("aws.context")
    if context is None:
        return None
    return float(context.get_remaining_time_in_millis()) / 1000 - LAMBDA_MARGIN_SECONDS

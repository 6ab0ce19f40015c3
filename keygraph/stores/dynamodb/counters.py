"""Counters of DynamoDB's pushback that an operator alarms on: throttled calls and the
attempts made again (Prometheus metrics; keygraph/serve/metrics.py exposes them at /metrics).

The retry layer calls `count_throttle` for each answer that says DynamoDB throttled a call,
and `count_retry` for each attempt it makes again, with why. The counters are registered at
the first count, so serving that is never pushed back (a Lambda's cold start) does not load
prometheus_client.
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _counters() -> tuple[Any, Any]:
    from prometheus_client import Counter

    throttles = Counter(
        "keygraph_dynamodb_throttles",
        "DynamoDB calls answered as throttled (each attempt counts).",
        ["operation"],
    )
    retries = Counter(
        "keygraph_dynamodb_retries",
        "DynamoDB calls attempted again, by the failure that caused it.",
        ["operation", "reason"],
    )
    return throttles, retries


def count_throttle(operation: str) -> None:
    """One attempt at `operation` (GetItem, Query, ...) that DynamoDB throttled."""
    _counters()[0].labels(operation).inc()


def count_retry(operation: str, reason: str) -> None:
    """One more attempt at `operation`; `reason` names the failure before it: an error
    code, `connection` (it failed on the way), or `unprocessed` (a batch's leftovers)."""
    _counters()[1].labels(operation, reason).inc()

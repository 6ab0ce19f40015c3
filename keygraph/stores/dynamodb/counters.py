"""Counters of DynamoDB's pushback that an operator alarms on: throttled calls and the
attempts made again (Prometheus metrics; server/observability exposes them at /metrics).

The retry layer calls `count_throttle` for each answer that says DynamoDB throttled a call,
and `count_retry` for each attempt it makes again, with why.
"""

from __future__ import annotations

from prometheus_client import Counter

THROTTLES = Counter(
    "keygraph_dynamodb_throttles",
    "DynamoDB calls answered as throttled (each attempt counts).",
    ["operation"],
)
RETRIES = Counter(
    "keygraph_dynamodb_retries",
    "DynamoDB calls attempted again, by the failure that caused it.",
    ["operation", "reason"],
)


def count_throttle(operation: str) -> None:
    """One attempt at `operation` (GetItem, Query, ...) that DynamoDB throttled."""
    THROTTLES.labels(operation).inc()


def count_retry(operation: str, reason: str) -> None:
    """One more attempt at `operation`; `reason` names the failure before it: an error
    code, `connection` (it failed on the way), or `unprocessed` (a batch's leftovers)."""
    RETRIES.labels(operation, reason).inc()

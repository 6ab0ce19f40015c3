"""Retry policy for DynamoDB calls: bounded attempts, exponential backoff with full jitter,
and which calls may be sent again when DynamoDB may already have run them.

A failure that leaves it unknown whether DynamoDB ran the call (the connection failed after
the request was written, the answer was cut short or damaged, no answer came in time, or a
5xx) is retried only for a call that running twice leaves as running once (`resendable`):

- reads (GetItem, BatchGetItem, Query, Scan): always;
- TransactWriteItems with a ClientRequestToken: DynamoDB runs a token's transaction once
  (for ten minutes) and answers its repeats as the first;
- BatchWriteItem, and PutItem, DeleteItem and UpdateItem without a condition (an update
  without ADD): writing the same values again leaves the same item;
- never a conditional PutItem, UpdateItem or DeleteItem, nor an update that ADDs. Sent again
  after it succeeded, a condition-checked write fails its own condition (a create finds the
  item it made, a version check the version it wrote) and an ADD counts twice: the caller
  would be told "condition failed", or the count be wrong. Such a call is reported as
  StoreUnavailable, its outcome unknown, rather than answered wrongly.

Failures that show the call did not run are retried for every call: no connection could be
opened, or DynamoDB refused it (throttling, RETRYABLE_CODES below 500, a cancelled
transaction's conflicts). A connection found closed by its peer before a request is written
on it is not a failure at all: it is never used (connections.py).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

RETRYABLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "LimitExceededException",
        "TransactionInProgressException",  # the same token's first attempt still runs
    }
)
"""Error codes worth another attempt: throttling and transient server errors."""

RETRYABLE_CANCEL_CODES = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"}
)
"""Cancellation reasons that clear on their own (no condition failed)."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 8
    base_delay: float = 0.025
    max_delay: float = 2.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait before attempt number `attempt + 1` (attempt counts from 1)."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return random.uniform(0, ceiling)


READS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan"})
_UNCONDITIONAL = frozenset({"PutItem", "DeleteItem", "UpdateItem"})


def resendable(operation: str, params: dict[str, Any]) -> bool:
    """Whether `operation` with `params` may be sent again when DynamoDB may already have
    run it (the module's rule)."""
    if operation in READS or operation == "BatchWriteItem":
        return True
    if operation == "TransactWriteItems":
        return bool(params.get("ClientRequestToken"))
    if operation in _UNCONDITIONAL and "ConditionExpression" not in params:
        # Expressions name every attribute by placeholder: ADD appears only as the clause.
        return "ADD" not in str(params.get("UpdateExpression", "")).split()
    return False

"""Retry policy for DynamoDB calls: bounded attempts, exponential backoff with full jitter,
and which calls may be sent again when DynamoDB may already have run them.

A failure that leaves it unknown whether DynamoDB ran the call (the connection failed after
the request was written, the answer was cut short or damaged, no answer came in time, or a
5xx) is retried only for a call that running twice leaves as running once (`resendable`):

- reads (GetItem, BatchGetItem, Query, Scan, and DynamoDB Streams' calls): always;
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
opened, or DynamoDB refused it (throttling, errors.RETRYABLE_CODES below 500, a cancelled
transaction's conflicts). A connection found closed by its peer before a request is written
on it is not a failure at all: it is never used (connections.py).

The error says whether the call may have been applied (StoreUnavailable.applied): None
after a write's attempt that may have run, False when every attempt was refused or never
sent (a throttled call did not run).

Every retry waits a capped exponential backoff with full jitter, and is made only while the
call has attempts left, the wait ends before the request's deadline (keygraph.deadline), and
the store's retry budget (RetryBudget) pays for it. When one of them says no, a call
DynamoDB throttled is StoreThrottled, a transaction cancelled by conflicts TransactionCanceled
(the caller's CONFLICT), anything else StoreUnavailable. What DynamoDB leaves unprocessed in
a batch is sent again the same way (`unprocessed_wait`), and is StoreThrottled when it may not
be. `_retry` is the one place where every retry is decided, knowing whether it follows a
throttle.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from keygraph import deadline
from keygraph.errors import StoreThrottled, StoreUnavailable

from .counters import count_retry, count_throttle
from .errors import map_error, retryable, throttled
from .transport import ServiceError, TransientError


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 8
    base_delay: float = 0.025
    max_delay: float = 2.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait before attempt number `attempt + 1` (attempt counts from 1)."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return random.uniform(0, ceiling)


@dataclass(slots=True)
class RetryBudget:
    """The retry quota of the AWS SDKs' standard retry mode, shared by a store's calls: a
    retry takes `retry_cost` tokens (`timeout_cost` after a connection failure or a timeout),
    a call that succeeds at once puts `success_refill` back, and one that succeeds after
    retries returns what its last retry took. Once DynamoDB fails most calls the bucket runs
    dry and calls fail at once, rather than multiplying the load on an endpoint in trouble."""

    capacity: int = 500
    retry_cost: int = 5
    timeout_cost: int = 10
    success_refill: int = 1
    tokens: int = field(init=False)

    def __post_init__(self) -> None:
        self.tokens = self.capacity

    def take(self, cost: int) -> bool:
        if cost > self.tokens:
            return False
        self.tokens -= cost
        return True

    def give(self, amount: int) -> None:
        self.tokens = min(self.capacity, self.tokens + amount)


class Attempts:
    """One call's attempts under `policy` and `budget`: after a failure, `failed` says how
    long to wait before the next (and whether on a new connection), or raises the error
    the caller gets."""

    __slots__ = (
        "attempt",
        "budget",
        "fresh",
        "held",
        "operation",
        "policy",
        "renewed",
        "resend",
        "unsure",
    )

    def __init__(
        self, policy: RetryPolicy, budget: RetryBudget, operation: str, params: dict[str, Any]
    ) -> None:
        self.policy, self.budget, self.operation = policy, budget, operation
        self.resend = resendable(operation, params)
        self.attempt = 1
        self.fresh = False
        """Whether the next attempt goes on a new connection."""
        self.renewed = False
        self.held = 0
        """Tokens the last retry took from the budget."""
        self.unsure = False
        """Whether an attempt of a write may have run (a 5xx, or a failure after sending)."""

    def succeeded(self) -> None:
        self.budget.give(self.held if self.held else self.budget.success_refill)

    def failed(self, failure: ServiceError | TransientError) -> float:
        """Seconds to wait before the next attempt, or the error to report, raised."""
        throttle = False
        maybe_ran = failure.status >= 500 if isinstance(failure, ServiceError) else failure.sent
        if maybe_ran and self.operation not in READS and self.operation not in STREAM_READS:
            self.unsure = True
        if isinstance(failure, ServiceError):
            if failure.status >= 500 and not self.resend:
                raise StoreUnavailable(
                    f"DynamoDB {self.operation} failed, its outcome unknown "
                    f"(not sent again): {failure.code}: {failure.message}",
                    applied=None,
                ) from failure
            if not retryable(failure):
                raise map_error(failure) from failure
            throttle = throttled(failure)
            if throttle:
                count_throttle(self.operation)
            cost, self.fresh = self.budget.retry_cost, False
        else:
            if failure.sent and not self.resend:
                raise StoreUnavailable(
                    f"DynamoDB {self.operation} failed, its outcome unknown "
                    f"(not sent again): {failure}",
                    applied=None,
                ) from failure
            if failure.stale and not self.renewed:
                # A connection its peer closed while idle: at once on a new one, once a call.
                self.fresh = self.renewed = True
                self.attempt += 1
                count_retry(self.operation, "connection")
                return 0.0
            cost, self.fresh = self.budget.timeout_cost, False
        refused = _retry(self.policy, self.attempt, self.budget, cost, throttle)
        if isinstance(refused, str):
            applied = None if self.unsure else False
            raise _gave_up(self.operation, failure, throttle, refused, applied) from failure
        self.held = cost
        self.attempt += 1
        count_retry(
            self.operation, failure.code if isinstance(failure, ServiceError) else "connection"
        )
        return refused


def unprocessed_wait(policy: RetryPolicy, attempt: int, what: str) -> float:
    """Seconds to wait before sending again the `what` (keys, writes) DynamoDB left
    unprocessed after attempt number `attempt`; StoreThrottled when no retry may be made
    (writes of the batch may have been applied)."""
    decided = _retry(policy, attempt, None, 0, throttle=True)
    if isinstance(decided, str):
        applied = False if what == "keys" else None
        raise StoreThrottled(f"DynamoDB left {what} unprocessed ({decided})", applied=applied)
    count_retry("BatchGetItem" if what == "keys" else "BatchWriteItem", "unprocessed")
    return decided


def _retry(
    policy: RetryPolicy, attempt: int, budget: RetryBudget | None, cost: int, throttle: bool
) -> float | str:
    """The wait before retrying after attempt number `attempt` (taking `cost` from
    `budget`), or why no retry may be made. `throttle` says whether the attempt was
    throttled, for counting retries and throttles where they are decided."""
    if attempt >= policy.max_attempts:
        return f"after {attempt} attempts"
    wait = policy.delay(attempt)
    left = deadline.remaining()
    if left is not None and wait >= left:
        return "before the request's deadline"
    if budget is not None and not budget.take(cost):
        return "the retry budget is spent"
    return wait


def _gave_up(
    operation: str,
    failure: ServiceError | TransientError,
    throttle: bool,
    why: str,
    applied: bool | None,
) -> Exception:
    """The error of a call not tried again (`why`) after a failure worth retrying;
    `applied` is None when an earlier attempt may have run."""
    if throttle:
        message = f"DynamoDB throttled {operation} ({why}): {failure}"
        return StoreThrottled(message, applied=applied)
    if isinstance(failure, ServiceError) and failure.code == "TransactionCanceledException":
        return map_error(failure)  # cancelled by conflicts: the caller's CONFLICT
    return StoreUnavailable(f"DynamoDB unavailable ({why}): {failure}", applied=applied)


READS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan"})
STREAM_READS = frozenset({"DescribeTable", "DescribeStream", "GetShardIterator", "GetRecords"})
"""The calls of a change-stream reader (streams.py): they only read."""
_UNCONDITIONAL = frozenset({"PutItem", "DeleteItem", "UpdateItem"})


def resendable(operation: str, params: dict[str, Any]) -> bool:
    """Whether `operation` with `params` may be sent again when DynamoDB may already have
    run it (the module's rule)."""
    if operation in READS or operation in STREAM_READS or operation == "BatchWriteItem":
        return True
    if operation == "TransactWriteItems":
        return bool(params.get("ClientRequestToken"))
    if operation in _UNCONDITIONAL and "ConditionExpression" not in params:
        # Expressions name every attribute by placeholder: ADD appears only as the clause.
        return "ADD" not in str(params.get("UpdateExpression", "")).split()
    return False

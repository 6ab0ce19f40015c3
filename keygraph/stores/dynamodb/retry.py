"""Retry policy for DynamoDB calls: bounded attempts, exponential backoff with full jitter."""

from __future__ import annotations

import random
from dataclasses import dataclass

RETRYABLE_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "LimitExceededException",
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

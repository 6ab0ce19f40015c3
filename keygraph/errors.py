"""Errors of the data layer. Stores raise StoreError subclasses; generated functions raise
the argument errors."""

from __future__ import annotations

from dataclasses import dataclass

from .plan import Item


class KeygraphError(Exception):
    """Base of every error the data layer raises on purpose."""


class Forbidden(KeygraphError):
    """A pattern's guard refused the session's caller, before any store call."""


class BadArgument(KeygraphError, ValueError):
    """An argument a generated function cannot use: an empty key value, a page size out of
    range, a value that does not fit its attribute."""


class KeyTooLong(BadArgument):
    """A value that makes a key longer than DynamoDB allows (2,048 bytes of UTF-8 for a
    partition key, 1,024 for a sort key, on the table and its indexes): no item can have
    it, so the key builder refuses it before any store is asked."""


class NotFound(KeygraphError):
    """A write's item, or the parent its count is kept on, does not exist."""


class Conflict(KeygraphError):
    """A write that the table's state refuses: an item or a unique value already there, or
    a version that is no longer current (`current_version`, when there is one)."""

    def __init__(self, message: str, current_version: int | None = None) -> None:
        super().__init__(message)
        self.current_version = current_version


class InvalidCursor(KeygraphError, ValueError):
    """A cursor that is malformed, edited, or issued for another tenant, pattern or arguments."""


class StoreError(KeygraphError):
    """Base of the errors a Store raises."""


class ValidationError(StoreError):
    """The store refused the request as DynamoDB would (item over 400 KB, more than 100 keys
    in a batch get, an empty key attribute, a float, ...)."""


class IdempotentParameterMismatch(ValidationError):
    """A transaction sent with a ClientRequestToken that an earlier, different transaction
    used within the token's window: nothing was written."""


class ConditionFailed(StoreError):
    """A conditional write whose condition did not hold; `item` is the item as it stood."""

    def __init__(self, message: str, item: Item | None = None) -> None:
        super().__init__(message)
        self.item = item


@dataclass(frozen=True, slots=True)
class CancelReason:
    """Why one action of a cancelled transaction failed; code "None" for the innocent ones."""

    code: str
    item: Item | None = None


class TransactionCanceled(StoreError):
    """A transaction that wrote nothing; one reason per action, in order."""

    def __init__(self, message: str, reasons: tuple[CancelReason, ...]) -> None:
        super().__init__(message)
        self.reasons = reasons


class StoreNotConfigured(StoreError, ValueError):
    """A store cannot be opened as configured (no AWS region, no credentials, ...); the
    message says what to set."""


class StoreUnavailable(StoreError):
    """The store could not be reached, or failed after bounded retries. `applied` says
    what became of the call: False, nothing was applied (never sent, or refused before it
    ran); None, it may have been (a write sent whose answer was lost)."""

    def __init__(self, message: str, *, applied: bool | None = False) -> None:
        super().__init__(message)
        self.applied = applied


class StoreThrottled(StoreUnavailable):
    """The store kept refusing a call for want of capacity (DynamoDB's throttling) past the
    retries its attempts, retry budget and deadline allowed: the caller may try again
    later."""

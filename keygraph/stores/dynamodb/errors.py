"""DynamoDB's errors as the protocol's, and which of them are worth another attempt."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from keygraph.errors import (
    CancelReason,
    ConditionFailed,
    IdempotentParameterMismatch,
    StoreUnavailable,
    TransactionCanceled,
    ValidationError,
)

from .transport import ServiceError
from .wire import deserialize_item

THROTTLE_CODES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)
"""DynamoDB refusing a call for want of capacity (the table's, an index's or the account's)."""

RETRYABLE_CODES = THROTTLE_CODES | {
    "InternalServerError",
    "ServiceUnavailable",
    "LimitExceededException",
    "TransactionInProgressException",  # the same token's first attempt still runs
}
"""Error codes worth another attempt: throttling and transient server errors."""

THROTTLE_CANCEL_CODES = frozenset({"ThrottlingError", "ProvisionedThroughputExceeded"})
RETRYABLE_CANCEL_CODES = THROTTLE_CANCEL_CODES | {"TransactionConflict"}
"""Cancellation reasons that clear on their own (no condition failed)."""


def cancel_reasons(body: Mapping[str, Any]) -> tuple[CancelReason, ...]:
    return tuple(
        CancelReason(r.get("Code", "None"), deserialize_item(r["Item"]) if "Item" in r else None)
        for r in body.get("CancellationReasons") or ()
    )


CREDENTIAL_CODES = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "MissingAuthenticationTokenException",
        "ExpiredTokenException",
        "AccessDeniedException",
    }
)
"""DynamoDB's answers to credentials it does not take, or that may not do the call."""
CREDENTIALS_REFUSED = (
    "check the credentials: access_key_id= and secret_access_key=, or AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, and the permissions of the identity they name"
)


def map_error(error: ServiceError) -> Exception:
    """The protocol's error for a DynamoDB error that will not be retried."""
    code, message, body = error.code, error.message, error.body
    if code == "ConditionalCheckFailedException":
        item = body.get("Item")
        return ConditionFailed(message, deserialize_item(item) if item else None)
    if code == "TransactionCanceledException":
        reasons = cancel_reasons(body)
        if any(reason.code == "ValidationError" for reason in reasons):
            return ValidationError(message)  # an action DynamoDB refused, as outside one
        return TransactionCanceled(message, reasons)
    if code in {"ValidationException", "SerializationException"}:
        return ValidationError(message)
    if code == "IdempotentParameterMismatchException":
        return IdempotentParameterMismatch(f"IdempotentParameterMismatch: {message}")
    if code in CREDENTIAL_CODES:
        return StoreUnavailable(
            f"DynamoDB refused the call ({code}: {message}); {CREDENTIALS_REFUSED}"
        )
    return StoreUnavailable(f"DynamoDB {code}: {message}")


def _cancel_codes(error: ServiceError) -> set[str]:
    return {r.code for r in cancel_reasons(error.body)} - {"None"}


def retryable(error: ServiceError) -> bool:
    """Throttling, server-side (5xx) errors, and transactions cancelled only by conflicts
    or throttling."""
    if error.code == "TransactionCanceledException":
        codes = _cancel_codes(error)
        return bool(codes) and codes <= RETRYABLE_CANCEL_CODES
    return error.code in RETRYABLE_CODES or error.status >= 500


def throttled(error: ServiceError) -> bool:
    """DynamoDB refused the call for want of capacity, or cancelled a transaction for it."""
    if error.code == "TransactionCanceledException":
        return bool(_cancel_codes(error) & THROTTLE_CANCEL_CODES)
    return error.code in THROTTLE_CODES

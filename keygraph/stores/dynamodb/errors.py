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

from .retry import RETRYABLE_CANCEL_CODES, RETRYABLE_CODES
from .transport import ServiceError
from .wire import deserialize_item


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


def retryable(error: ServiceError) -> bool:
    """Throttling, server-side (5xx) errors, and transactions cancelled only by conflicts
    or throttling."""
    if error.code == "TransactionCanceledException":
        codes = {r.code for r in cancel_reasons(error.body)} - {"None"}
        return bool(codes) and codes <= RETRYABLE_CANCEL_CODES
    return error.code in RETRYABLE_CODES or error.status >= 500

"""Opaque pagination cursors, HMAC-signed over tenant, pattern, arguments and position,
and (through a key derived per caller) over who they were given to."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

from .errors import InvalidCursor

_MAC_BYTES = 16


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


class CursorCodec:
    """Encodes a position (JSON-able) into a cursor bound to (tenant, pattern, args).

    The cursor carries only the position; tenant, pattern and arguments are bound through
    the MAC, so a cursor replayed under any other of them fails to verify.
    """

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("cursor secret must be at least 16 bytes")
        self._secret = secret

    def bound_to(self, subject: str | None) -> CursorCodec:
        """A codec whose cursors verify only for the caller `subject` (None: callers
        without one): another caller's cursor is INVALID_CURSOR."""
        caller = b"\x01" if subject is None else b"\x00" + subject.encode()
        return CursorCodec(hmac.new(self._secret, b"caller" + caller, hashlib.sha256).digest())

    def _mac(self, tenant: str, pattern: str, args: Mapping[str, Any], body: bytes) -> bytes:
        message = b"\x00".join((tenant.encode(), pattern.encode(), _canonical(dict(args)), body))
        return hmac.new(self._secret, message, hashlib.sha256).digest()[:_MAC_BYTES]

    def encode(
        self, tenant: str, pattern: str, args: Mapping[str, Any], position: Mapping[str, Any]
    ) -> str:
        body = _canonical(dict(position))
        return _b64(body) + "." + _b64(self._mac(tenant, pattern, args, body))

    def decode(
        self, cursor: str, tenant: str, pattern: str, args: Mapping[str, Any]
    ) -> dict[str, Any]:
        try:
            body_text, mac_text = cursor.split(".")
            body, mac = _unb64(body_text), _unb64(mac_text)
        except (ValueError, binascii.Error) as exc:
            raise InvalidCursor("cursor is malformed") from exc
        if not hmac.compare_digest(mac, self._mac(tenant, pattern, args, body)):
            raise InvalidCursor("cursor does not belong to this query")
        try:
            position = json.loads(body)
        except ValueError as exc:
            raise InvalidCursor("cursor is malformed") from exc
        if not isinstance(position, dict):
            raise InvalidCursor("cursor is malformed")
        return position

"""AWS Signature Version 4 for DynamoDB's JSON protocol: POST to "/" with no query string,
signing exactly the headers the transport sends. The daily signing key is derived once per
(date, region, secret) instead of four HMACs on every request."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import MutableMapping
from typing import Protocol

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "dynamodb"


class Signing(Protocol):
    """Credentials as of one request (botocore's ReadOnlyCredentials, or fixed ones)."""

    @property
    def access_key(self) -> str | None: ...
    @property
    def secret_key(self) -> str | None: ...
    @property
    def token(self) -> str | None: ...


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), hashlib.sha256).digest()


class Signer:
    """Signs requests for one region; safe to share between threads."""

    def __init__(self, region: str) -> None:
        self.region = region
        self._key: tuple[str, str, bytes] = ("", "", b"")

    def _signing_key(self, date: str, secret: str) -> bytes:
        cached_date, cached_secret, key = self._key
        if cached_date != date or cached_secret != secret:
            key = _hmac(("AWS4" + secret).encode(), date)
            for part in (self.region, SERVICE, "aws4_request"):
                key = _hmac(key, part)
            self._key = (date, secret, key)  # one tuple: readers never see half of it
        return key

    def sign(
        self,
        headers: MutableMapping[str, str],
        body: bytes,
        credentials: Signing,
        now: float | None = None,
    ) -> None:
        """Add X-Amz-Date, X-Amz-Security-Token (temporary credentials) and Authorization to
        `headers`, which must hold Host and every other header to sign, names in any case."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
        headers["X-Amz-Date"] = stamp
        if credentials.token:
            headers["X-Amz-Security-Token"] = credentials.token
        signed = sorted((name.lower(), " ".join(value.split())) for name, value in headers.items())
        names = ";".join(name for name, _ in signed)
        canonical = "\n".join(
            (
                "POST",
                "/",
                "",
                *(f"{name}:{value}" for name, value in signed),
                "",
                names,
                hashlib.sha256(body).hexdigest(),
            )
        )
        date = stamp[:8]
        scope = f"{date}/{self.region}/{SERVICE}/aws4_request"
        to_sign = "\n".join(
            (ALGORITHM, stamp, scope, hashlib.sha256(canonical.encode()).hexdigest())
        )
        key = self._signing_key(date, credentials.secret_key or "")
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["Authorization"] = (
            f"{ALGORITHM} Credential={credentials.access_key}/{scope}, "
            f"SignedHeaders={names}, Signature={signature}"
        )

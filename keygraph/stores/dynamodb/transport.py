"""DynamoDB's data plane without botocore's request pipeline: each call is one signed POST of
the DynamoDB JSON 1.0 protocol over keep-alive connections on the event loop
(connections.py), bodies written and read with orjson, answers checked against the
x-amz-crc32 header."""

from __future__ import annotations

import functools
import os
import ssl
import zlib
from typing import Any, Protocol
from urllib.parse import urlsplit

import botocore
import orjson
from botocore.exceptions import BotoCoreError

from keygraph.errors import StoreUnavailable, ValidationError

from .connections import IDLE_TIMEOUT, Connections, ExchangeFailed, Reply
from .sigv4 import Signer, Signing

TARGET_PREFIX = "DynamoDB_20120810."
CONTENT_TYPE = "application/x-amz-json-1.0"


class ServiceError(Exception):
    """DynamoDB answered with an error: `code` is the short name of its `__type`
    (e.g. ConditionalCheckFailedException); `body` the whole decoded answer."""

    def __init__(self, status: int, code: str, message: str, body: dict[str, Any]) -> None:
        super().__init__(f"{code}: {message}")
        self.status, self.code, self.message, self.body = status, code, message, body


class TransientError(Exception):
    """The call failed on the way to DynamoDB or back, or its answer arrived damaged: worth
    another attempt when the call may be sent again (retry.resendable). `sent` False: the
    request went nowhere (no connection could be opened), so any call may be sent again.
    `stale`: a connection that had carried earlier calls failed before any byte of the
    answer arrived, as one its peer closed while idle does; worth sending again at once, on
    a new connection."""

    def __init__(self, message: str, *, sent: bool = True, stale: bool = False) -> None:
        super().__init__(message)
        self.sent, self.stale = sent, stale


class Credentials(Protocol):
    """What signs the calls: botocore's credential objects, or connect.Fixed."""

    def get_frozen_credentials(self) -> Signing: ...


class Pool(Protocol):
    """What the transport sends its requests through (connections.Connections)."""

    async def post(self, head: bytes, body: bytes, *, fresh: bool = False) -> Reply: ...

    def close(self) -> None: ...


@functools.cache
def tls() -> ssl.SSLContext:
    """The TLS context of every HTTPS transport, loaded once: the CA bundle botocore's own
    client verifies with (certifi's when installed, else the one botocore ships)."""
    try:
        from certifi import where
    except ImportError:
        bundle = os.path.join(os.path.dirname(botocore.__file__), "cacert.pem")
    else:
        bundle = where()
    return ssl.create_default_context(cafile=bundle)


def default_endpoint(region: str) -> str:
    return f"https://dynamodb.{region}.amazonaws.com"


def parse_error(status: int, data: bytes) -> ServiceError:
    """The error an HTTP 4xx/5xx answer carries; answers without DynamoDB's JSON (a proxy's
    page, a truncated body) are named after their status."""
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        body = None
    if not isinstance(body, dict):
        text = data[:200].decode(errors="replace")
        return ServiceError(status, f"HTTP{status}", text, {})
    code = str(body.get("__type", f"HTTP{status}")).rpartition("#")[2]
    message = body.get("message", body.get("Message", code))
    return ServiceError(status, code, str(message), body)


class Transport:
    """DynamoDB calls on the running event loop, as many at once as callers make (up to
    `max_connections` keep-alive connections carry them).

    `credentials` is botocore's credential object (its chain's answer) or fixed ones: it is
    frozen on every call, so refreshing temporary credentials keep working. `target_prefix`
    names the API: DynamoDB's by default, DynamoDB Streams' for a stream reader
    (streams.py).
    """

    def __init__(
        self,
        endpoint_url: str,
        region: str,
        credentials: Credentials | None,
        *,
        max_connections: int = 64,
        connect_timeout: float = 2.0,
        read_timeout: float = 10.0,
        idle_timeout: float = IDLE_TIMEOUT,
        pool: Pool | None = None,
        target_prefix: str = TARGET_PREFIX,
    ) -> None:
        self.endpoint_url = endpoint_url
        self.target_prefix = target_prefix
        parts = urlsplit(endpoint_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) endpoint: {endpoint_url!r}")
        if parts.path not in ("", "/") or parts.query:
            raise ValueError(f"DynamoDB endpoints take no path or query: {endpoint_url!r}")
        https = parts.scheme == "https"
        default_port = 443 if https else 80
        self.host = parts.hostname if parts.port in (None, default_port) else parts.netloc
        self.credentials = credentials
        self.signer = Signer(region)
        self.pool: Pool = pool or Connections(
            parts.hostname,
            parts.port or default_port,
            tls=tls() if https else None,
            max_connections=max_connections,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            idle_timeout=idle_timeout,
        )

    async def call(
        self, operation: str, params: dict[str, Any], *, fresh: bool = False
    ) -> dict[str, Any]:
        """One attempt at `operation` (e.g. "GetItem") with its request in DynamoDB JSON, on
        a new connection when `fresh`. Raises ServiceError for DynamoDB's errors,
        TransientError when the connection failed or the answer's checksum does not
        match."""
        if self.credentials is None:
            raise StoreUnavailable("no AWS credentials found for DynamoDB")
        try:
            body = orjson.dumps(params)
        except orjson.JSONEncodeError as exc:
            raise ValidationError(f"the {operation} request cannot be sent: {exc}") from exc
        headers = {
            "Host": self.host,
            "Content-Type": CONTENT_TYPE,
            "X-Amz-Target": self.target_prefix + operation,
        }
        try:
            credentials = self.credentials.get_frozen_credentials()
        except BotoCoreError as exc:
            raise StoreUnavailable(f"AWS credentials could not be refreshed: {exc}") from exc
        self.signer.sign(headers, body, credentials)
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        head = f"POST / HTTP/1.1\r\n{lines}Content-Length: {len(body)}\r\n\r\n"
        try:
            reply = await self.pool.post(head.encode(), body, fresh=fresh)
        except ExchangeFailed as exc:
            stale = exc.reused and not exc.answered
            raise TransientError(str(exc), sent=exc.sent, stale=stale) from exc
        data = reply.data
        expected = reply.headers.get("x-amz-crc32")
        if expected is not None and str(zlib.crc32(data)) != expected.strip():
            raise TransientError(f"CRC32 mismatch on the {operation} answer")
        if reply.status >= 300:
            raise parse_error(reply.status, data)
        try:
            answer: dict[str, Any] = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise TransientError(f"unreadable {operation} answer: {exc}") from exc
        return answer

    def close(self) -> None:
        self.pool.close()

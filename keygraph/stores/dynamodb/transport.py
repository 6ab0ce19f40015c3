"""DynamoDB's data plane without botocore's request pipeline: each call is one signed POST of
the DynamoDB JSON 1.0 protocol over keep-alive connections on the event loop
(connections.py), bodies written and read with orjson, answers checked against the
x-amz-crc32 header."""

from __future__ import annotations

import asyncio
import ssl
import zlib
from typing import Any, Protocol
from urllib.parse import urlsplit

import orjson
from botocore.credentials import Credentials
from botocore.exceptions import BotoCoreError
from botocore.httpsession import get_cert_path

from keygraph.errors import StoreUnavailable, ValidationError

from .connections import Connections, ProtocolError, Reply
from .sigv4 import Signer

TARGET_PREFIX = "DynamoDB_20120810."
CONTENT_TYPE = "application/x-amz-json-1.0"


class ServiceError(Exception):
    """DynamoDB answered with an error: `code` is the short name of its `__type`
    (e.g. ConditionalCheckFailedException); `body` the whole decoded answer."""

    def __init__(self, status: int, code: str, message: str, body: dict[str, Any]) -> None:
        super().__init__(f"{code}: {message}")
        self.status, self.code, self.message, self.body = status, code, message, body


class TransientError(Exception):
    """The call may not have reached DynamoDB, or its answer arrived damaged: worth
    another attempt."""


class Pool(Protocol):
    """What the transport sends its requests through (connections.Connections)."""

    async def post(self, head: bytes, body: bytes) -> Reply: ...

    def close(self) -> None: ...


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

    `credentials` is botocore's credential object (its chain's answer): it is frozen on
    every call, so refreshing temporary credentials keep working.
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
        pool: Pool | None = None,
    ) -> None:
        self.endpoint_url = endpoint_url
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
        # botocore's CA bundle for HTTPS, as its own client would verify with.
        tls = ssl.create_default_context(cafile=get_cert_path(True)) if https else None
        self.pool: Pool = pool or Connections(
            parts.hostname,
            parts.port or default_port,
            tls=tls,
            max_connections=max_connections,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
        )

    async def call(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        """One attempt at `operation` (e.g. "GetItem") with its request in DynamoDB JSON.
        Raises ServiceError for DynamoDB's errors, TransientError when the connection
        failed or the answer's checksum does not match."""
        if self.credentials is None:
            raise StoreUnavailable("no AWS credentials found for DynamoDB")
        try:
            body = orjson.dumps(params)
        except orjson.JSONEncodeError as exc:
            raise ValidationError(f"the {operation} request cannot be sent: {exc}") from exc
        headers = {
            "Host": self.host,
            "Content-Type": CONTENT_TYPE,
            "X-Amz-Target": TARGET_PREFIX + operation,
        }
        try:
            credentials = self.credentials.get_frozen_credentials()
        except BotoCoreError as exc:
            raise StoreUnavailable(f"AWS credentials could not be refreshed: {exc}") from exc
        self.signer.sign(headers, body, credentials)
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        head = f"POST / HTTP/1.1\r\n{lines}Content-Length: {len(body)}\r\n\r\n"
        try:
            reply = await self.pool.post(head.encode(), body)
        except (OSError, TimeoutError, ProtocolError, asyncio.IncompleteReadError) as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from exc
        except asyncio.LimitOverrunError as exc:
            raise TransientError(f"an answer's head is too long: {exc}") from exc
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

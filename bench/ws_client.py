"""A light graphql-transport-ws subscriber for benchmarks: an asyncio Protocol reading the
server's frames as the loop hands it the bytes (no task woken per message, no WebSocket
library in the way), so a thousand subscribers cost the client process little. Each `next`
goes to a callback with the moment its bytes arrived."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from collections.abc import Callable
from typing import Any, cast

PROTOCOL = "graphql-transport-ws"
TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA
TIMEOUT_S = 60.0

OnNext = Callable[[Any, float], None]
"""Called with a `next` message's payload and when its bytes arrived (time.perf_counter)."""


class Closed(Exception):
    """The server closed the connection or refused it."""


def frame(opcode: int, payload: bytes) -> bytes:
    """A client's frame: final, masked (RFC 6455 §5.3)."""
    size = len(payload)
    if size < 126:
        header = bytes((0x80 | opcode, 0x80 | size))
    elif size < 1 << 16:
        header = bytes((0x80 | opcode, 0x80 | 126)) + size.to_bytes(2, "big")
    else:
        header = bytes((0x80 | opcode, 0x80 | 127)) + size.to_bytes(8, "big")
    mask = os.urandom(4)
    repeated = (mask * (size // 4 + 1))[:size]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(
        size, "big"
    )
    return header + mask + masked


class Subscriber(asyncio.Protocol):
    """One WebSocket connection holding one subscription (id "1")."""

    def __init__(self, host: str, port: int, on_next: OnNext) -> None:
        self._request = (
            f"GET /graphql HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
            f"Sec-WebSocket-Protocol: {PROTOCOL}\r\n\r\n"
        ).encode()
        self._on_next = on_next
        self._buffer = bytearray()
        self._upgraded = False
        self._transport: asyncio.Transport | None = None
        self._others: asyncio.Queue[Any] = asyncio.Queue()
        self.closed: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        self._transport.write(self._request)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = exc or Closed("the server closed the connection")
        self._others.put_nowait(self.closed)

    def data_received(self, data: bytes) -> None:
        at = time.perf_counter()
        self._buffer += data
        if not self._upgraded:
            head, found, rest = self._buffer.partition(b"\r\n\r\n")
            if not found:
                return
            if b" 101 " not in head.split(b"\r\n", 1)[0]:
                self._others.put_nowait(Closed(head.decode(errors="replace")))
                return
            self._upgraded, self._buffer = True, bytearray(rest)
            self._others.put_nowait({"type": "upgraded"})
        while (message := self._frame()) is not None:
            opcode, payload = message
            if opcode == TEXT:
                self._text(payload, at)
            elif opcode == PING:
                self._write(frame(PONG, payload))
            elif opcode == CLOSE:
                self._others.put_nowait(Closed(f"closed: {payload[:2].hex()}"))

    def _frame(self) -> tuple[int, bytes] | None:
        """The next whole frame of the buffer (the server's: unmasked, unfragmented)."""
        buffer = self._buffer
        if len(buffer) < 2:
            return None
        size, start = buffer[1] & 0x7F, 2
        if size == 126:
            size, start = int.from_bytes(buffer[2:4], "big"), 4
        elif size == 127:
            size, start = int.from_bytes(buffer[2:10], "big"), 10
        if len(buffer) < start + size:
            return None
        opcode, payload = buffer[0] & 0x0F, bytes(buffer[start : start + size])
        del buffer[: start + size]
        return opcode, payload

    def _text(self, payload: bytes, at: float) -> None:
        message = json.loads(payload)
        kind = message.get("type")
        if kind == "next":
            self._on_next(message["payload"], at)
        elif kind == "ping":
            self.send_json({"type": "pong"})
        else:
            self._others.put_nowait(message)

    def _write(self, data: bytes) -> None:
        if self._transport is not None:
            self._transport.write(data)

    def send_json(self, message: dict[str, Any]) -> None:
        self._write(frame(TEXT, json.dumps(message).encode()))

    async def _expect(self, kind: str) -> None:
        message = await asyncio.wait_for(self._others.get(), TIMEOUT_S)
        if isinstance(message, Exception):
            raise message
        if message.get("type") != kind:
            raise Closed(f"expected {kind}, got {message!r}")

    async def subscribe(self, token: str, query: str, variables: dict[str, Any]) -> None:
        """The upgrade, connection_init and its ack, then the subscription."""
        await self._expect("upgraded")
        self.send_json({"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"}})
        await self._expect("connection_ack")
        payload = {"query": query, "variables": variables}
        self.send_json({"type": "subscribe", "id": "1", "payload": payload})

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


async def subscriber(host: str, port: int, on_next: OnNext) -> Subscriber:
    """A new connection's protocol, before its upgrade is answered."""
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(lambda: Subscriber(host, port, on_next), host, port)
    return protocol

"""A WebSocket client that writes its own frames to a real socket, for what a well-behaved
client library never sends: several messages in one TCP write, fragmented, binary and
compressed (RSV1) frames, a handshake offering permessage-deflate, an abrupt end."""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import struct
import zlib
from typing import Any

import orjson

from tests.server.realtime.conftest import PROTOCOL

TEXT, BINARY, CONTINUATION, CLOSE, PING = 0x1, 0x2, 0x0, 0x8, 0x9
WAIT = 10.0


def frame(opcode: int, payload: bytes, *, fin: bool = True, rsv1: bool = False) -> bytes:
    """One masked client frame."""
    first = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    size = len(payload)
    if size < 126:
        head = bytes([first, 0x80 | size])
    elif size < 1 << 16:
        head = bytes([first, 0x80 | 126]) + struct.pack("!H", size)
    else:
        head = bytes([first, 0x80 | 127]) + struct.pack("!Q", size)
    mask = os.urandom(4)
    repeated = (mask * (size // 4 + 1))[:size]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(
        size, "big"
    )
    return head + mask + masked


def text(message: dict[str, Any]) -> bytes:
    return frame(TEXT, orjson.dumps(message))


def fragmented(message: dict[str, Any], parts: int) -> bytes:
    """A text message split into `parts` frames (a first one and continuations)."""
    data = orjson.dumps(message)
    step = max(1, len(data) // parts)
    chunks = [data[i : i + step] for i in range(0, len(data), step)]
    frames = [
        frame(TEXT if n == 0 else CONTINUATION, chunk, fin=n == len(chunks) - 1)
        for n, chunk in enumerate(chunks)
    ]
    return b"".join(frames)


def deflated(size: int) -> bytes:
    """A compressed (RSV1) text frame of `size` spaces, deflated as permessage-deflate does."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = compressor.compress(b" " * size) + compressor.flush(zlib.Z_SYNC_FLUSH)
    return frame(TEXT, data[:-4], rsv1=True)


def close(code: int = 1000) -> bytes:
    return frame(CLOSE, struct.pack("!H", code))


class RawSocket:
    """One WebSocket connection whose frames the test writes."""

    def __init__(self, port: int, *, deflate: bool = False) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            "GET /graphql HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            f"Sec-WebSocket-Protocol: {PROTOCOL}",
        ]
        if deflate:
            lines.append("Sec-WebSocket-Extensions: permessage-deflate")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self._buffer = b""
        while b"\r\n\r\n" not in self._buffer:
            self._buffer += self._recv()
        head, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        self.head = head.decode("latin-1")
        assert self.head.startswith("HTTP/1.1 101"), self.head

    def _recv(self) -> bytes:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("the server ended the connection")
        return data

    def _take(self, size: int) -> bytes:
        while len(self._buffer) < size:
            self._buffer += self._recv()
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def send(self, *frames: bytes) -> None:
        """Writes the frames in one write."""
        self.sock.sendall(b"".join(frames))

    def receive(self) -> tuple[int, bytes]:
        """The next frame from the server: its opcode and payload."""
        first, second = self._take(2)
        size = second & 0x7F
        if size == 126:
            (size,) = struct.unpack("!H", self._take(2))
        elif size == 127:
            (size,) = struct.unpack("!Q", self._take(8))
        return first & 0x0F, self._take(size)

    def message(self) -> dict[str, Any]:
        """The next protocol message; AssertionError on a close."""
        opcode, payload = self.receive()
        assert opcode == TEXT, (opcode, payload)
        decoded: dict[str, Any] = orjson.loads(payload)
        return decoded

    def close_code(self) -> int | None:
        """Reads until the server's close frame: its code (None: the server ended the
        connection without one)."""
        with contextlib.suppress(ConnectionError, OSError):
            while True:
                opcode, payload = self.receive()
                if opcode == CLOSE:
                    code: int = struct.unpack("!H", payload[:2])[0]
                    return code
        return None

    def end(self) -> None:
        """Ends the TCP connection, with no close frame."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()

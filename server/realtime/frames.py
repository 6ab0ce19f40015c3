"""The WebSocket frames a worker writes to a subscriber's socket itself: a text message as
one unmasked, uncompressed frame (RFC 6455 5.2; the server offers no extension)."""

from __future__ import annotations

import struct

_TEXT = 0x81
"""FIN and the text opcode: a whole message in one frame."""


def text_frame(data: bytes) -> bytes:
    """A server's frame of one text message of `data` (UTF-8)."""
    size = len(data)
    if size < 126:
        return bytes((_TEXT, size)) + data
    if size < 1 << 16:
        return struct.pack("!BBH", _TEXT, 126, size) + data
    return struct.pack("!BBQ", _TEXT, 127, size) + data

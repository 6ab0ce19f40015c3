"""The WebSocket protocol keygraph serves subscriptions with: uvicorn's wsproto protocol, whose
ASGI scope also offers a synchronous send (server/realtime/fanout.py's SEND_NOW), so one
task can write a change's `next` message to many sockets without waking a task for each.

It writes a text message as one unmasked, uncompressed frame (RFC 6455 5.2; the server
offers no extension), and only while the connection is open and its transport takes writes:
otherwise it writes nothing, and the message goes through ASGI's send as any other. Built on
uvicorn's `WSProtocol` internals, pinned with uvicorn.
"""

from __future__ import annotations

import struct

from uvicorn.protocols.websockets.wsproto_impl import WSProtocol
from wsproto import events
from wsproto.connection import ConnectionState

from server.realtime.fanout import SEND_NOW

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


class SendingNow(WSProtocol):
    """uvicorn's wsproto protocol with a send that writes at once or not at all."""

    def handle_connect(self, event: events.Request) -> None:
        super().handle_connect(event)
        self.scope["extensions"][SEND_NOW] = self.send_now  # type: ignore[assignment]

    def send_now(self, data: bytes) -> bool:
        """Writes a text message of `data` if the connection is open and its transport
        is not paused; False, and nothing written, if not."""
        if (
            self.close_sent
            or self.disconnected
            or not self.handshake_complete
            or self.response_started
            or not self.writable.is_set()
            or self.conn.state is not ConnectionState.OPEN
            or self.transport.is_closing()
        ):
            return False
        self.transport.write(text_frame(data))
        return True

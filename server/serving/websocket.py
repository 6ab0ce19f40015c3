"""The WebSocket protocol keygraph serves subscriptions with: uvicorn's wsproto protocol, whose
ASGI scope also offers a synchronous send of a whole frame (server/realtime/fanout.py's
SEND_NOW), so one task can write a change's `next` message to many sockets without waking a
task for each.

It writes the frame only while the connection is open and its transport takes writes:
otherwise it writes nothing, and the message goes through ASGI's send as any other. Built on
uvicorn's `WSProtocol` internals, pinned with uvicorn.
"""

from __future__ import annotations

from uvicorn.protocols.websockets.wsproto_impl import WSProtocol
from wsproto import events
from wsproto.connection import ConnectionState

from server.realtime.fanout import SEND_NOW


class SendingNow(WSProtocol):
    """uvicorn's wsproto protocol with a send that writes at once or not at all."""

    def handle_connect(self, event: events.Request) -> None:
        super().handle_connect(event)
        self.scope["extensions"][SEND_NOW] = self.send_now  # type: ignore[assignment]

    def send_now(self, frame: bytes) -> bool:
        """Writes `frame`, a text message's (server/realtime/frames.py), if the connection
        is open and its transport is not paused; False, and nothing written, if not."""
        transport = self.transport
        if (
            self.close_sent
            or self.disconnected
            or not self.handshake_complete
            or self.response_started
            or not self.writable.is_set()
            or transport.is_closing()
            or self.conn.state is not ConnectionState.OPEN
        ):
            return False
        transport.write(frame)
        return True

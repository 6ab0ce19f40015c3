"""A WebSocket client that writes its own frames to a real socket, for what a well-behaved
client library never sends: several messages in one TCP write, fragmented, binary and
compressed (RSV1) frames, a handshake offering permessage-deflate, an abrupt end
(tests/keygraph/api/raw_frames.py). And a `serve` app run in a thread of the test's
process, so a test reads its counters directly."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import uvicorn

from keygraph.store import Store
from keygraph.stores.dynamodb.local import free_port
from server.edge.app import App, create_app
from server.serving import serve
from server.settings import Settings
from tests.keygraph.api.raw_frames import (
    BINARY,
    PING,
    RawSocket,
    close,
    deflated,
    fragmented,
    frame,
    text,
)
from tests.waiting import answering

__all__ = [
    "BINARY",
    "PING",
    "RawSocket",
    "close",
    "deflated",
    "fragmented",
    "frame",
    "text",
    "Served",
    "served",
]


@dataclass
class Served:
    """A `serve` app on a port of this machine, run in a thread of the test's process; the
    sockets opened to it are ended with it."""

    app: App
    port: int
    settings: Settings
    opened: list[RawSocket] = field(default_factory=list)

    def raw(self, *, deflate: bool = False) -> RawSocket:
        ws = RawSocket(self.port, deflate=deflate)
        self.opened.append(ws)
        return ws


@contextlib.contextmanager
def served(settings: Settings, store: Store) -> Iterator[Served]:
    """Serves the hand-written app as `serve` configures uvicorn (wsproto, its options), in
    a thread."""
    app = create_app(settings, store, close_store=True)
    listening = replace(serve.listening(settings), port=free_port())
    config = listening.config(app, settings.limits.request_timeout)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="served-app", daemon=True)
    thread.start()
    try:
        answering(f"http://127.0.0.1:{config.port}/readyz", thread.is_alive)
        running = Served(app, config.port, settings)
        try:
            yield running
        finally:
            for ws in running.opened:
                ws.end()
    finally:
        server.should_exit = True
        thread.join(30)

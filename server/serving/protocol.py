"""The HTTP/1.1 protocol keygraph serves with: uvicorn's httptools protocol on uvloop, where an
answer's head (status line and headers) waits for its body, so both reach the socket in one
write, and a request's head is refused past `MAX_HEAD_BYTES` as h11 would.

uvicorn writes the head when the app starts its answer and the body when it sends it: two
writes, two system calls and, on a connection with Nagle's algorithm off, two packets. The
transport wrapper below holds the head of each answer the protocol starts until the answer's
first body write (a streamed answer's first part), and sends both with one `writelines` (one
`writev` on uvloop); a WebSocket upgrade hands the protocol of its frames the socket's own
transport. Built on uvicorn's `HttpToolsProtocol` internals, pinned with uvicorn.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

MAX_HEAD_BYTES = 16 * 1024
"""The most a request's target and headers may take; h11's default, which uvicorn served with
before (httptools itself sets no limit). Past it the request is refused with 400."""
_INTERIM = b"HTTP/1.1 1"
"""An interim answer (100 Continue) is sent at once: the client waits for it."""


class HeadHeld:
    """A connection's transport that holds the next answer's head, once armed, until the
    answer's next write, and hands both to the socket together."""

    __slots__ = ("_armed", "_head", "_transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._armed = False
        self._head: bytes | None = None

    @property
    def transport(self) -> asyncio.Transport:
        """The connection's own transport, which holds nothing."""
        return self._transport

    def arm(self) -> None:
        """The next write (not an interim answer) is an answer's head: hold it."""
        self._armed = True

    def write(self, data: bytes) -> None:
        head = self._head
        if head is not None:
            self._head = None
            self._transport.writelines((head, data))
        elif self._armed and not data.startswith(_INTERIM):
            self._armed = False
            self._head = data
        else:
            self._transport.write(data)

    def flush(self) -> None:
        """Send a held head now (an answer with no body: HEAD, or the app failed)."""
        self._armed = False
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class Protocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with each answer's head and body in one write."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_bytes = 0
        self._head_open = False
        self._heads = 0
        self._unparsed_head = 0
        self.held = HeadHeld(transport)
        self.transport = cast("asyncio.Transport", self.held)

    def data_received(self, data: bytes) -> None:
        """Feed the parser; refuse a head still unfinished after more than `MAX_HEAD_BYTES`
        of reads that held nothing else (httptools keeps a header's bytes until it ends,
        so the count of parsed headers alone would not bound a single endless one)."""
        was_open, heads = self._head_open, self._heads
        super().data_received(data)
        if not self._head_open or heads != self._heads or not was_open:
            self._unparsed_head = 0  # no head open, or one began inside this read
            return
        self._unparsed_head += len(data)
        if self._unparsed_head > MAX_HEAD_BYTES and not self.transport.is_closing():
            self._head_open = False
            self.logger.warning("Invalid HTTP request received.")
            self.send_400_response("Invalid HTTP request received.")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_bytes = 0
        self._head_open = True
        self._heads += 1

    def on_headers_complete(self) -> None:
        self._head_open = False
        super().on_headers_complete()

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value))
        super().on_header(name, value)

    def _count(self, size: int) -> None:
        self._head_bytes += size
        if self._head_bytes > MAX_HEAD_BYTES:
            raise httptools.HttpParserError("the request's head is too large")

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        self.held.arm()
        super()._start_asgi_task(cycle, app)

    def handle_websocket_upgrade(self) -> None:
        """The WebSocket protocol answers the upgrade and writes its frames on the
        connection's own transport: none of its writes is an answer's head to hold."""
        self.held.flush()
        self.transport = self.held.transport
        super().handle_websocket_upgrade()

    def on_response_complete(self) -> None:
        self.held.flush()
        super().on_response_complete()


def uvicorn_options() -> dict[str, Any]:
    """The `uvicorn.Config` arguments that choose this protocol, its event loop, and wsproto
    for the WebSocket upgrades of subscriptions, without permessage-deflate: wsproto
    inflates a compressed message whole before its size is checked, so one small frame
    could inflate to hundreds of megabytes."""
    return {"http": Protocol, "loop": "uvloop", "ws": "wsproto", "ws_per_message_deflate": False}

"""HTTP/1.1 keep-alive connections to one DynamoDB endpoint on the event loop: a POST is
written and its answer read on an idle connection, or a new one, with no thread between the
caller and the socket. Next to a thread pool around a blocking client this costs a third of
the client CPU a call (bench/README.md). A connection whose exchange fails or is cancelled
midway is closed, never reused.

Endpoints, load balancers and proxies close keep-alive connections that stay idle (AWS load
balancers after 60 s by default, common proxies after 5 to 20 s, DynamoDB Local's Jetty after
30 s). A connection idle for `idle_timeout` seconds is closed instead of reused, before such
limits strike, and one whose peer has already closed it (its end of stream has arrived) is
never reused. A failed exchange says how far it got (ExchangeFailed), for the caller to judge
whether the request may be sent again."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

_HEAD_END = b"\r\n\r\n"

IDLE_TIMEOUT = 4.0
"""Seconds a connection may wait idle and still be reused: under the shortest idle limit in
common use (5 s: Node.js servers, many proxies; the AWS SDK for Java's async client closes
its own after 5 s too), so our close comes first. A new connection costs a TCP (and TLS)
handshake, a few milliseconds in a region; a busy pool reuses its connections long before."""


@dataclass(frozen=True, slots=True)
class Reply:
    """An HTTP answer: its status, its headers (lower-case names) and its body."""

    status: int
    headers: dict[str, str]
    data: bytes


class ProtocolError(Exception):
    """The peer's answer is not HTTP/1.1 as expected."""


class ExchangeFailed(Exception):
    """An exchange that failed, and how far it got: `sent` False when no connection could be
    opened (the request went nowhere); `answered` whether any byte of the answer arrived;
    `reused` whether the connection had carried an earlier exchange. The underlying error is
    the `__cause__`."""

    def __init__(self, cause: BaseException, *, sent: bool, answered: bool, reused: bool) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.sent, self.answered, self.reused = sent, answered, reused


_FAILURES = (
    OSError,
    TimeoutError,
    ProtocolError,
    asyncio.IncompleteReadError,
    asyncio.LimitOverrunError,  # an answer's head too long
    ValueError,  # a length that is no number
)
"""What a failing exchange raises: socket errors, timeouts, a closed or garbled answer."""


@dataclass(slots=True)
class _Idle:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    since: float


class Connections:
    """Up to `max_connections` keep-alive connections to `host`:`port` (TLS when `tls` is
    given) on the running event loop; more callers wait for one to be free."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        tls: ssl.SSLContext | None = None,
        max_connections: int = 64,
        connect_timeout: float = 2.0,
        read_timeout: float = 10.0,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        self.host, self.port, self.tls = host, port, tls
        self.max_connections = max_connections
        self.connect_timeout, self.read_timeout = connect_timeout, read_timeout
        self.idle_timeout = idle_timeout
        self._idle: list[_Idle] = []  # the most recently used last
        self._loop: asyncio.AbstractEventLoop | None = None
        self._free: asyncio.Semaphore | None = None
        self._keeper: AsyncIterator[None] | None = None

    async def post(self, head: bytes, body: bytes, *, fresh: bool = False) -> Reply:
        """Sends the request `head` (its request line and headers, ending in a blank line)
        with `body`, on a new connection when `fresh`; the answer. ExchangeFailed when the
        exchange fails."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # connections belong to the loop that opened them
            self._drop_idle()
            self._loop, self._free = loop, asyncio.Semaphore(self.max_connections)
            self._keeper = self._until_loop_ends(loop)
            await anext(self._keeper)
        assert self._free is not None
        async with self._free:
            idle = None if fresh else self._take_idle()
            if idle is not None:
                reader, writer = idle.reader, idle.writer
            else:
                try:
                    reader, writer = await self._connect()
                except _FAILURES as exc:
                    raise ExchangeFailed(exc, sent=False, answered=False, reused=False) from exc
            answered = False
            try:
                writer.write(head + body)
                async with asyncio.timeout(self.read_timeout):
                    await writer.drain()  # a large batch waits for the socket, not memory
                    first = await reader.read(1)
                    if not first:
                        raise asyncio.IncompleteReadError(b"", None)
                    answered = True
                    reply, keep = await _read(first, reader)
            except BaseException as exc:
                _close(writer)
                if isinstance(exc, _FAILURES):
                    reused = idle is not None
                    raise ExchangeFailed(exc, sent=True, answered=answered, reused=reused) from exc
                raise
            if keep:
                self._idle.append(_Idle(reader, writer, time.monotonic()))
            else:
                _close(writer)
            return reply

    def _take_idle(self) -> _Idle | None:
        """The most recently used idle connection still fit to carry a request; those idle
        too long or closed by their peer are closed on the way."""
        oldest = time.monotonic() - self.idle_timeout
        expired = 0  # the list is in the order the connections fell idle
        while expired < len(self._idle) and self._idle[expired].since <= oldest:
            _close(self._idle[expired].writer)
            expired += 1
        del self._idle[:expired]
        while self._idle:
            idle = self._idle.pop()
            if _open(idle):
                return idle
            _close(idle.writer)
        return None

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        async with asyncio.timeout(self.connect_timeout):
            return await asyncio.open_connection(
                self.host,
                self.port,
                ssl=self.tls,
                server_hostname=self.host if self.tls is not None else None,
            )

    async def _until_loop_ends(self, loop: asyncio.AbstractEventLoop) -> AsyncIterator[None]:
        """Suspended while `loop` runs; the loop closes it as it shuts down (its async
        generators are closed before it is), and the idle connections with it, on the loop
        they belong to, unless another loop has taken over since."""
        try:
            yield
        finally:
            if self._loop is loop:
                self._drop_idle()

    def _drop_idle(self) -> None:
        for idle in self._idle:
            _close(idle.writer)
        self._idle.clear()

    def close(self) -> None:
        """Closes the idle connections."""
        self._drop_idle()


def _open(idle: _Idle) -> bool:
    """Whether an idle connection's peer has neither closed it nor sent anything unasked (a
    408 before closing, say): the event loop reads idle sockets too, so a close that has
    arrived shows as the end of the stream, or as an error."""
    reader = idle.reader
    return not (
        idle.writer.transport.is_closing()
        or reader.at_eof()
        or reader.exception() is not None
        or _buffered(reader)
    )


def _buffered(reader: asyncio.StreamReader) -> bool:
    buffer: bytearray = getattr(reader, "_buffer", bytearray())  # no public accessor
    return bool(buffer)


async def _read(first: bytes, reader: asyncio.StreamReader) -> tuple[Reply, bool]:
    """One answer, its `first` byte already read, and whether its connection may carry the
    next request."""
    head = (first + await reader.readuntil(_HEAD_END)).decode("latin-1")
    status_line, *lines = head[: -len(_HEAD_END)].split("\r\n")
    version, _, rest = status_line.partition(" ")
    if not version.startswith("HTTP/1.") or not rest[:3].isdigit():
        raise ProtocolError(f"not an HTTP/1.1 answer: {status_line[:80]!r}")
    headers: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        data = await _chunks(reader)
    elif "content-length" in headers:
        data = await reader.readexactly(int(headers["content-length"]))
    else:
        raise ProtocolError("an answer without a length")
    keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
    return Reply(int(rest[:3]), headers, data), keep


async def _chunks(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # no trailers are sent
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _close(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(RuntimeError):  # its loop is closed: the socket goes with it
        writer.close()

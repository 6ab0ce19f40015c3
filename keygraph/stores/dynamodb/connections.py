"""HTTP/1.1 keep-alive connections to one DynamoDB endpoint on the event loop: a POST is
written and its answer read on an idle connection, or a new one, with no thread between the
caller and the socket. Next to a thread pool around a blocking client this costs a third of
the client CPU a call (bench/README.md). A connection whose exchange fails or is cancelled
midway is closed, never reused."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass

_HEAD_END = b"\r\n\r\n"


@dataclass(frozen=True, slots=True)
class Reply:
    """An HTTP answer: its status, its headers (lower-case names) and its body."""

    status: int
    headers: dict[str, str]
    data: bytes


class ProtocolError(Exception):
    """The peer's answer is not HTTP/1.1 as expected."""


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
    ) -> None:
        self.host, self.port, self.tls = host, port, tls
        self.max_connections = max_connections
        self.connect_timeout, self.read_timeout = connect_timeout, read_timeout
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._free: asyncio.Semaphore | None = None
        self._keeper: AsyncIterator[None] | None = None

    async def post(self, head: bytes, body: bytes) -> Reply:
        """Sends the request `head` (its request line and headers, ending in a blank line)
        with `body`; the answer. OSError, TimeoutError, ProtocolError or
        asyncio.IncompleteReadError when the exchange fails."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # connections belong to the loop that opened them
            self._drop_idle()
            self._loop, self._free = loop, asyncio.Semaphore(self.max_connections)
            self._keeper = self._until_loop_ends(loop)
            await anext(self._keeper)
        assert self._free is not None
        async with self._free:
            reader, writer = self._idle.pop() if self._idle else await self._connect()
            try:
                writer.write(head + body)
                async with asyncio.timeout(self.read_timeout):
                    await writer.drain()  # a large batch waits for the socket, not memory
                    reply, keep = await _read(reader)
            except BaseException:
                _close(writer)
                raise
            if keep:
                self._idle.append((reader, writer))
            else:
                _close(writer)
            return reply

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
        for _, writer in self._idle:
            _close(writer)
        self._idle.clear()

    def close(self) -> None:
        """Closes the idle connections."""
        self._drop_idle()


async def _read(reader: asyncio.StreamReader) -> tuple[Reply, bool]:
    """One answer, and whether its connection may carry the next request."""
    head = (await reader.readuntil(_HEAD_END)).decode("latin-1")
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

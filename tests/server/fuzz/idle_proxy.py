"""A TCP proxy on loopback in front of an endpoint that closes every connection left idle
(its last bytes were an answer) for `idle` seconds, as DynamoDB Local (Jetty, about 30 s)
and AWS's endpoints do: a client that reuses kept-alive connections meets a closed one after
any pause longer than that."""

from __future__ import annotations

import asyncio
import contextlib
import time

from keygraph.stores.dynamodb.local import free_port


class IdleProxy:
    """Forwards 127.0.0.1:`port` to `host`:`target_port`; closes idle connections."""

    def __init__(self, host: str, target_port: int, idle: float) -> None:
        self.host, self.target_port, self.idle = host, target_port, idle
        self.port = free_port()
        self.closed_idle = 0
        """Connections it closed for idleness."""
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        upstream_reader, upstream_writer = await asyncio.open_connection(
            self.host, self.target_port
        )
        last = [time.monotonic(), 0.0]
        """When bytes last passed, and 1.0 when they were an answer (the client's turn)."""

        async def pump(
            source: asyncio.StreamReader, sink: asyncio.StreamWriter, answer: float
        ) -> None:
            while chunk := await source.read(65_536):
                last[:] = [time.monotonic(), answer]
                sink.write(chunk)
                await sink.drain()

        pumps = [
            asyncio.ensure_future(pump(reader, upstream_writer, 0.0)),
            asyncio.ensure_future(pump(upstream_reader, writer, 1.0)),
        ]
        try:
            while not any(p.done() for p in pumps):
                await asyncio.sleep(self.idle / 10)
                if last[1] and time.monotonic() - last[0] > self.idle:
                    self.closed_idle += 1
                    break
        finally:
            for p in pumps:
                p.cancel()
            for w in (writer, upstream_writer):
                w.close()
                with contextlib.suppress(OSError, ConnectionError):
                    await w.wait_closed()
            self._tasks.discard(task)

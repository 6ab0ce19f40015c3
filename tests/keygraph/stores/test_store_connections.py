"""The DynamoDB transport's HTTP/1.1 connections (connections.py), against a scripted local
server: a connection carries call after call, chunked and closing answers are read whole,
an exchange cut short closes its connection, and connections opened on a loop that has
ended are closed with it, not reused."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from keygraph.stores.dynamodb import connections
from keygraph.stores.dynamodb.connections import Connections, ExchangeFailed, ProtocolError
from keygraph.stores.dynamodb.local import free_port
from tests.waiting import until

HEAD = b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n"

Answer = Callable[[int], bytes]
"""The bytes the server writes for the n-th request on a connection (0-based); it closes
the connection after nothing, a closing answer or one with "cut" in it."""


class Server:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.connections = 0
        self.requests = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            for n in range(1000):
                await reader.readuntil(b"\r\n\r\n")
                await reader.readexactly(2)
                self.requests += 1
                data = self.answer(n)
                writer.write(data)
                await writer.drain()
                if not data or b"Connection: close" in data or b"cut" in data:
                    break
        except asyncio.IncompleteReadError:
            pass
        finally:
            writer.close()


Start = Callable[[Answer], Awaitable[tuple[Server, int]]]
"""Starts a scripted server; it and its port."""


@pytest.fixture
async def serve() -> AsyncIterator[Start]:
    servers: list[asyncio.Server] = []

    async def start(answer: Answer) -> tuple[Server, int]:
        server = Server(answer)
        listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        servers.append(listening)
        return server, listening.sockets[0].getsockname()[1]

    yield start
    for listening in servers:
        listening.close()
        await listening.wait_closed()


def _ok(body: bytes = b"{}", extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


async def test_one_connection_carries_call_after_call(serve: Start) -> None:
    server, port = await serve(lambda n: _ok(b'{"n":%d}' % n))
    pool = Connections("127.0.0.1", port)
    replies = [await pool.post(HEAD, b"{}") for _ in range(3)]
    assert [reply.data for reply in replies] == [b'{"n":0}', b'{"n":1}', b'{"n":2}']
    assert (server.connections, server.requests) == (1, 3)
    assert replies[0].status == 200
    assert replies[0].headers == {"content-length": "7"}
    pool.close()


async def test_chunked_and_closing_answers_are_read_whole(serve: Start) -> None:
    chunked = (
        b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"a\r\n4\r\n":1}\r\n0\r\n\r\n'
    )
    server, port = await serve(lambda n: chunked if n == 0 else _ok(extra=b"Connection: close\r\n"))
    pool = Connections("127.0.0.1", port)
    assert (await pool.post(HEAD, b"{}")).data == b'{"a":1}'
    assert (await pool.post(HEAD, b"{}")).data == b"{}"  # and the connection is closed
    assert (await pool.post(HEAD, b"{}")).data == b'{"a":1}'  # on a new one
    assert server.connections == 2
    pool.close()


async def test_an_exchange_cut_short_closes_its_connection(serve: Start) -> None:
    server, port = await serve(lambda n: _ok(b'{"cut":1}')[:-3] if n == 1 else _ok())
    pool = Connections("127.0.0.1", port)
    await pool.post(HEAD, b"{}")
    with pytest.raises(ExchangeFailed) as cut:
        await pool.post(HEAD, b"{}")
    assert isinstance(cut.value.__cause__, asyncio.IncompleteReadError)
    assert (cut.value.sent, cut.value.answered, cut.value.reused) == (True, True, True)
    assert (await pool.post(HEAD, b"{}")).data == b"{}"
    assert server.connections == 2
    pool.close()
    _, port = await serve(lambda n: b"HTTP/1.1 200 OK\r\n\r\n{}")
    no_length = Connections("127.0.0.1", port)
    with pytest.raises(ExchangeFailed) as garbled:
        await no_length.post(HEAD, b"{}")
    assert isinstance(garbled.value.__cause__, ProtocolError)
    assert (garbled.value.answered, garbled.value.reused) == (True, False)


def test_connections_of_an_ended_loop_close_with_it() -> None:
    async def run(pool: Connections | None) -> tuple[Connections, int]:
        server = Server(lambda n: _ok())
        listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        pool = pool or Connections("127.0.0.1", listening.sockets[0].getsockname()[1])
        pool.port = listening.sockets[0].getsockname()[1]
        await pool.post(HEAD, b"{}")
        listening.close()
        return pool, len(pool._idle)

    pool, idle = asyncio.run(run(None))
    assert idle == 1
    assert pool._idle == []  # closed as the loop shut down, not left to the collector
    _, idle = asyncio.run(run(pool))  # a new loop opens its own
    assert idle == 1


class Clock:
    """The pool's clock (its module's `time`), moved on by the test rather than waited on."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


async def test_connections_idle_too_long_are_not_reused(
    serve: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(connections, "time", clock)
    server, port = await serve(lambda n: _ok())
    pool = Connections("127.0.0.1", port, idle_timeout=0.2)
    await asyncio.gather(pool.post(HEAD, b"{}"), pool.post(HEAD, b"{}"))
    clock.now += 0.19
    await pool.post(HEAD, b"{}")
    assert (server.connections, len(pool._idle)) == (2, 2)  # reused while fresh
    clock.now += 0.15  # one was just used: the other has been idle past the timeout
    await pool.post(HEAD, b"{}")
    assert (server.connections, server.requests) == (2, 4)
    assert len(pool._idle) == 1  # the expired one is closed, not kept
    clock.now += 0.2
    await pool.post(HEAD, b"{}")
    assert (server.connections, server.requests) == (3, 5)
    assert len(pool._idle) == 1
    pool.close()


async def test_a_connection_its_peer_closed_is_not_reused(serve: Start) -> None:
    # The server closes every connection after its first answer, as one closing idle ones.
    server, port = await serve(lambda n: _ok(b'{"cut":0}'))
    pool = Connections("127.0.0.1", port)
    for _ in range(3):
        await until(  # the close arrives while the connection waits idle
            lambda: all(idle.reader.at_eof() for idle in pool._idle), "the server's close"
        )
        assert (await pool.post(HEAD, b"{}")).data == b'{"cut":0}'
    assert (server.connections, server.requests) == (3, 3)
    pool.close()


async def test_a_reused_connection_dead_before_its_answer_says_so(serve: Start) -> None:
    # The close crosses the request: no byte of an answer comes back.
    _, port = await serve(lambda n: b"" if n == 1 else _ok())
    pool = Connections("127.0.0.1", port)
    await pool.post(HEAD, b"{}")
    with pytest.raises(ExchangeFailed) as dead:
        await pool.post(HEAD, b"{}")
    assert (dead.value.sent, dead.value.answered, dead.value.reused) == (True, False, True)
    assert (await pool.post(HEAD, b"{}", fresh=True)).data == b"{}"
    pool.close()
    refused = Connections("127.0.0.1", free_port(), connect_timeout=0.5)
    with pytest.raises(ExchangeFailed) as nowhere:
        await refused.post(HEAD, b"{}")
    assert (nowhere.value.sent, nowhere.value.reused) == (False, False)

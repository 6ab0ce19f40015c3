import asyncio
import json
import os
from collections.abc import AsyncIterator

import pytest

from bench.loadgen import LoadSpec, run_load

SERVED: list[int] = []
"""One entry per request any test server answered."""


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: bytes) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            await reader.readexactly(length)
            SERVED.append(1)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionResetError):
        pass
    finally:
        writer.close()


async def _server(body: bytes) -> AsyncIterator[int]:
    server = await asyncio.start_server(lambda r, w: _answer(r, w, body), host="127.0.0.1", port=0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield port
    finally:
        server.close()
        await server.wait_closed()


@pytest.fixture
async def ok_port() -> AsyncIterator[int]:
    async for port in _server(json.dumps({"data": {"ok": True}}).encode()):
        yield port


@pytest.fixture
async def failing_port() -> AsyncIterator[int]:
    async for port in _server(json.dumps({"errors": [{"message": "no"}]}).encode()):
        yield port


async def test_stops_at_the_request_budget(ok_port: int) -> None:
    spec = LoadSpec(port=ok_port, body=b"{}", concurrency=3, duration_s=10.0, max_requests=25)
    summary, first_error = await run_load(spec)
    assert summary.requests == 25  # not the thousands of its 10 s
    assert summary.errors == 0
    assert first_error is None


async def test_stops_at_the_time_budget(ok_port: int) -> None:
    spec = LoadSpec(port=ok_port, body=b"{}", concurrency=2, duration_s=0.3, max_requests=10**9)
    async with asyncio.timeout(60):  # a deadline for a run that would not stop
        summary, _ = await run_load(spec)
    assert summary.seconds >= 0.3
    assert summary.requests > 2
    assert summary.p50_ms <= summary.p99_ms


async def test_counts_graphql_errors_as_failures(failing_port: int) -> None:
    spec = LoadSpec(port=failing_port, body=b"{}", concurrency=1, duration_s=5.0, max_requests=4)
    summary, first_error = await run_load(spec)
    assert summary.errors == 4
    assert first_error is not None
    assert "no" in first_error


async def test_warmup_requests_are_sent_but_not_measured(ok_port: int) -> None:
    spec = LoadSpec(
        port=ok_port, body=b"{}", concurrency=2, duration_s=10.0, max_requests=6, warmup=3
    )
    before = len(SERVED)
    summary, _ = await run_load(spec)
    assert summary.requests == 6
    assert len(SERVED) - before == 6 + 2 * 3


async def test_reads_the_servers_cpu_time_around_the_timed_run(ok_port: int) -> None:
    # The test server runs in this process: its CPU time is this process's.
    spec = LoadSpec(
        port=ok_port, body=b"{}", duration_s=0.3, max_requests=10**9, server_pid=os.getpid()
    )
    summary, _ = await run_load(spec)
    assert summary.cpu_ms is not None
    assert 0 < summary.cpu_ms * summary.requests <= summary.seconds * 1000 * 1.5
    unread, _ = await run_load(LoadSpec(port=ok_port, body=b"{}", max_requests=3))
    assert unread.cpu_ms is None

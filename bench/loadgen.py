"""A closed-loop HTTP/1.1 load generator for 127.0.0.1 only.

N keep-alive connections each send one POST, wait for the whole answer, and send the next,
until the time OR the request budget runs out (whichever first). Written on bare asyncio
streams so the generator costs far less CPU per request than the server it measures.

Run as a separate process (`python -m bench.loadgen ...`) so it does not share an event loop
or a core's time slices with the server; it prints one JSON summary on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from bench.machine import process_cpu_s
from bench.stats import RunSummary, summarize
from server.serving.datastack import run_with_headroom

HOST = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class LoadSpec:
    port: int
    body: bytes
    path: str = "/graphql"
    headers: tuple[tuple[str, str], ...] = ()
    concurrency: int = 4
    duration_s: float = 2.0
    max_requests: int = 10_000
    warmup: int = 0
    """Unmeasured requests per connection before the timed run."""
    server_pid: int | None = None
    """The server's process, whose CPU time is read around the timed run."""


@dataclass(slots=True)
class _Tally:
    issued: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)
    first_error: str | None = None


def encode_request(spec: LoadSpec) -> bytes:
    lines = [
        f"POST {spec.path} HTTP/1.1",
        f"Host: {HOST}:{spec.port}",
        "Content-Type: application/json",
        "Accept: application/json",
        f"Content-Length: {len(spec.body)}",
        *(f"{name}: {value}" for name, value in spec.headers),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + spec.body


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One HTTP/1.1 response with a Content-Length body: (status, body)."""
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    length = None
    for line in header_lines:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        raise ValueError("the server answered without a Content-Length")
    return status, await reader.readexactly(length)


def _failed(status: int, body: bytes) -> bool:
    return status != 200 or b'"errors"' in body


Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def _warm(connection: Connection, request: bytes, count: int) -> None:
    reader, writer = connection
    for _ in range(count):
        writer.write(request)
        await read_response(reader)


async def _timed(
    connection: Connection, spec: LoadSpec, request: bytes, deadline: float, tally: _Tally
) -> None:
    reader, writer = connection
    while time.perf_counter() < deadline and tally.issued < spec.max_requests:
        tally.issued += 1
        started = time.perf_counter()
        writer.write(request)
        status, body = await read_response(reader)
        tally.latencies.append(time.perf_counter() - started)
        if _failed(status, body):
            tally.errors += 1
            if tally.first_error is None:
                tally.first_error = f"{status}: {body[:500].decode(errors='replace')}"


async def run_load(spec: LoadSpec) -> tuple[RunSummary, str | None]:
    """Load the server as `spec` says; the summary and the first failed answer, if any.
    Each connection first sends `spec.warmup` requests that are not measured."""
    request = encode_request(spec)
    connections = [await asyncio.open_connection(HOST, spec.port) for _ in range(spec.concurrency)]
    try:
        await asyncio.gather(*(_warm(c, request, spec.warmup) for c in connections))
        tally = _Tally()
        pid = spec.server_pid
        cpu_before = process_cpu_s(pid) if pid is not None else 0.0
        started = time.perf_counter()
        deadline = started + spec.duration_s
        await asyncio.gather(*(_timed(c, spec, request, deadline, tally) for c in connections))
        elapsed = time.perf_counter() - started
        server_cpu = process_cpu_s(pid) - cpu_before if pid is not None else None
    finally:
        for _, writer in connections:
            writer.close()
            await writer.wait_closed()
    summary = summarize(tally.latencies, elapsed, tally.errors, server_cpu)
    return summary, tally.first_error


def _parse(argv: Sequence[str]) -> LoadSpec:
    parser = argparse.ArgumentParser(prog="python -m bench.loadgen", description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/graphql")
    parser.add_argument("--body-file", required=True, help="the JSON request body")
    parser.add_argument("--header", action="append", default=[], help="'Name: value'")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--duration", type=float, default=2.0, help="seconds")
    parser.add_argument("--max-requests", type=int, default=10_000)
    parser.add_argument("--warmup", type=int, default=0, help="requests per connection")
    parser.add_argument("--server-pid", type=int, help="read its CPU time around the run")
    args = parser.parse_args(argv)
    with open(args.body_file, "rb") as file:
        body = file.read()
    headers = tuple(
        (name.strip(), value.strip())
        for name, _, value in (header.partition(":") for header in args.header)
    )
    return LoadSpec(
        port=args.port,
        body=body,
        path=args.path,
        headers=headers,
        concurrency=args.concurrency,
        duration_s=args.duration,
        max_requests=args.max_requests,
        warmup=args.warmup,
        server_pid=args.server_pid,
    )


def main(argv: Sequence[str] | None = None) -> None:
    spec = _parse(sys.argv[1:] if argv is None else argv)
    summary, first_error = run_with_headroom(lambda: asyncio.run(run_load(spec)))
    print(json.dumps({"summary": summary.to_json(), "first_error": first_error}))


if __name__ == "__main__":
    main()

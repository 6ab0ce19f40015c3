"""A fault-injecting HTTP proxy in front of a DynamoDB endpoint (DynamoDB Local), for tests
and soaks: requests pass through unchanged unless a rule picks them, and then DynamoDB
seems to throttle, fail, slow down, cancel a transaction, or lose the connection before or
after running the call.

    with FaultProxy(local.endpoint_url) as proxy:
        store = DynamoDBStore(table, endpoint_url=proxy.url, ...)
        proxy.add(THROTTLING, operations={"GetItem"}, times=2)   # the next two GetItems
        proxy.add(RESET_AFTER, probability=0.01)                 # 1% of every call, on

The proxy runs its own event loop on a thread, so sync code (the CLI) and async tests use
it alike; rules may be added and removed while it runs. Only HTTP/1.1 with a
Content-Length request body is spoken, as DynamoDB's clients send."""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import struct
import threading
import time
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import TracebackType
from urllib.parse import urlsplit

import orjson

from keygraph.stores.dynamodb.transport import TARGET_PREFIX

__all__ = [
    "INTERNAL_SERVER_ERROR",
    "RESET_AFTER",
    "RESET_BEFORE",
    "THROTTLING",
    "THROUGHPUT_EXCEEDED",
    "Fault",
    "FaultProxy",
    "Rule",
    "cancelled",
    "delay",
    "error",
]

_HEAD_END = b"\r\n\r\n"
_ERROR_TYPE = "com.amazonaws.dynamodb.v20120810#"


@dataclass(frozen=True, slots=True)
class Fault:
    """What happens to a request a rule picks. `kind`: "error" (answer `status` with
    DynamoDB's error JSON of `code`, and `reasons` as a cancelled transaction's
    CancellationReasons; the call is not run), "delay" (run it `seconds` late),
    "reset_before" (reset the connection without running the call) or "reset_after"
    (run the call, then reset the connection instead of answering)."""

    name: str
    kind: str
    code: str = ""
    status: int = 400
    reasons: tuple[str, ...] = ()
    seconds: float = 0.0


def error(code: str, status: int = 400, reasons: Iterable[str] = ()) -> Fault:
    return Fault(code, "error", code, status, tuple(reasons))


def delay(seconds: float) -> Fault:
    return Fault(f"delay {seconds:g}s", "delay", seconds=seconds)


THROTTLING = error("ThrottlingException")
THROUGHPUT_EXCEEDED = error("ProvisionedThroughputExceededException")
INTERNAL_SERVER_ERROR = error("InternalServerError", 500)
RESET_BEFORE = Fault("reset before", "reset_before")
RESET_AFTER = Fault("reset after", "reset_after")


def cancelled(*reasons: str) -> Fault:
    """TransactionCanceledException with one reason per action ("None" for the innocent)."""
    return error("TransactionCanceledException", 400, reasons)


@dataclass(slots=True)
class Rule:
    """Picks requests for `fault`: of `operations` (None: any), each with `probability`,
    `times` times (None: while the rule stands)."""

    fault: Fault
    operations: frozenset[str] | None = None
    times: int | None = None
    probability: float = 1.0

    def picks(self, operation: str, draw: float) -> bool:
        if self.times == 0 or (self.operations is not None and operation not in self.operations):
            return False
        return draw < self.probability


@dataclass(slots=True)
class _Request:
    operation: str
    head: bytes
    body: bytes


@dataclass
class FaultProxy:
    """The proxy in front of `upstream` (an http:// URL); `url` is its own, once started."""

    upstream: str
    seed: int | None = None
    rules: list[Rule] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    """Requests seen, by operation."""
    injected: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Faults injected, by (operation, fault name)."""

    def __post_init__(self) -> None:
        parts = urlsplit(self.upstream)
        if parts.scheme != "http" or not parts.hostname or not parts.port:
            raise ValueError(f"an http://host:port upstream is needed: {self.upstream!r}")
        self._target = (parts.hostname, parts.port)
        self._random = random.Random(self.seed)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._stopping: asyncio.Future[None] | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self.url = ""

    # scripting

    def add(
        self,
        fault: Fault,
        *,
        operations: Iterable[str] | None = None,
        times: int | None = None,
        probability: float = 1.0,
    ) -> Rule:
        """A rule for `fault`, after those already standing; it stays until `remove`d or
        its `times` are used."""
        rule = Rule(
            fault, None if operations is None else frozenset(operations), times, probability
        )
        with self._lock:
            self.rules.append(rule)
        return rule

    def remove(self, rule: Rule) -> None:
        with self._lock:
            self.rules.remove(rule)

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()

    def _pick(self, operation: str) -> Fault | None:
        with self._lock:
            self.calls[operation] += 1
            for rule in self.rules:
                if rule.picks(operation, self._random.random()):
                    if rule.times is not None:
                        rule.times -= 1
                    self.injected[operation, rule.fault.name] += 1
                    return rule.fault
        return None

    # running

    def start(self) -> FaultProxy:
        """Listen on a free loopback port, on a thread of its own."""
        started = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(started,), name="fault-proxy", daemon=True
        )
        self._thread.start()
        if not started.wait(10) or self._server is None:
            raise RuntimeError("the fault proxy did not start")
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def _run(self, started: threading.Event) -> None:
        asyncio.run(self._main(started))

    async def _main(self, started: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        stopping = self._stopping = self._loop.create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        started.set()
        await stopping
        self._server.close()
        for handler in list(self._handlers):
            handler.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set_result, None)
            self._thread.join(10)
            self._loop = self._thread = None

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # one client connection

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        try:
            while (request := await _read_request(reader)) is not None:
                fault = self._pick(request.operation)
                if fault is not None and fault.kind == "error":
                    writer.write(_error_answer(fault))
                    await writer.drain()
                    continue
                if fault is not None and fault.kind == "reset_before":
                    _reset(writer)
                    return
                if fault is not None and fault.kind == "delay":
                    await asyncio.sleep(fault.seconds)
                if upstream is None or upstream[0].at_eof():
                    if upstream is not None:
                        upstream[1].close()
                    upstream = await asyncio.open_connection(*self._target)
                upstream[1].write(request.head + request.body)
                await upstream[1].drain()
                answer = await _read_answer(upstream[0])
                if fault is not None and fault.kind == "reset_after":
                    _reset(writer)
                    return
                writer.write(answer)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError, ValueError):
            pass  # the client or DynamoDB went away: so does this connection
        finally:
            if upstream is not None:
                upstream[1].close()
            writer.close()
            self._handlers.discard(task)


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    """The next request on a connection, or None once the client has closed it."""
    try:
        head = await reader.readuntil(_HEAD_END)
    except asyncio.IncompleteReadError:
        return None
    length, operation = 0, ""
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
        elif name.strip().lower() == "x-amz-target":
            operation = value.strip().removeprefix(TARGET_PREFIX)
    return _Request(operation, head, await reader.readexactly(length))


async def _read_answer(reader: asyncio.StreamReader) -> bytes:
    """An answer's bytes as they came (a Content-Length body, or chunks)."""
    head = await reader.readuntil(_HEAD_END)
    headers = {
        name.strip().lower(): value.strip()
        for name, _, value in (
            line.partition(":") for line in head.decode("latin-1").split("\r\n")[1:]
        )
    }
    if headers.get("transfer-encoding", "").lower() != "chunked":
        return head + await reader.readexactly(int(headers.get("content-length", "0")))
    parts = [head]
    while True:
        size_line = await reader.readuntil(b"\r\n")
        parts.append(size_line)
        size = int(size_line.split(b";")[0], 16)
        parts.append(await reader.readexactly(size + 2))
        if size == 0:
            return b"".join(parts)


def _error_answer(fault: Fault) -> bytes:
    body: dict[str, object] = {"__type": _ERROR_TYPE + fault.code, "message": fault.name}
    if fault.reasons:
        body["CancellationReasons"] = [
            {"Code": code, "Message": code} if code != "None" else {"Code": "None"}
            for code in fault.reasons
        ]
        body["message"] = (
            f"Transaction cancelled, please refer cancellation reasons [{', '.join(fault.reasons)}]"
        )
    data = orjson.dumps(body)
    reason = "Bad Request" if fault.status == 400 else "Internal Server Error"
    head = (
        f"HTTP/1.1 {fault.status} {reason}\r\n"
        f"Content-Type: application/x-amz-json-1.0\r\n"
        f"x-amz-crc32: {zlib.crc32(data)}\r\n"
        f"x-amzn-RequestId: fault-{time.monotonic_ns()}\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    return head.encode() + data


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP reset (RST), not an orderly FIN: the client sees its connection
    reset by the peer."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()

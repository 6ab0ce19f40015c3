"""The serving protocol: each answer's head and body reach the transport in one write, streamed
parts are not held back, interim answers go at once, and an oversized request head is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from generated.table import TABLE
from keygraph.serve.serving import config as config_of
from keygraph.stores.embedded.store import EmbeddedStore
from server.compiled import compiled
from server.serving import serve
from server.serving.protocol import MAX_HEAD_BYTES, Protocol
from server.settings import Settings


class Recorder(asyncio.Transport):
    """A transport that keeps each call that hands it bytes, as the list of buffers given."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[bytes]] = []
        self.closed = False
        self.protocol: HttpToolsProtocol | None = None

    def set_protocol(self, protocol: Any) -> None:
        self.protocol = protocol

    def write(self, data: Any) -> None:
        self.calls.append([bytes(data)])

    def writelines(self, list_of_data: Any) -> None:
        self.calls.append([bytes(data) for data in list_of_data])

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 40000)}.get(
            name, default
        )

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def sent(self) -> bytes:
        return b"".join(b"".join(call) for call in self.calls)


async def _answer(scope: Any, receive: Any, send: Any) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    answer = b'{"echo":"' + body + b'"}'
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(answer))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


async def _streamed(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    for part in (b"one", b"two"):
        await send({"type": "http.response.body", "body": part, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def _connect(app: Any, protocol: type[HttpToolsProtocol] = Protocol) -> Recorder:
    config = Config(app=app, http=protocol, lifespan="off", log_config=None)
    config.load()
    transport = Recorder()
    server = protocol(config=config, server_state=ServerState(), app_state={})
    server.connection_made(transport)
    transport.set_protocol(server)
    return transport


def _post(body: bytes, *headers: bytes) -> bytes:
    head = [b"POST /graphql HTTP/1.1", b"host: x", b"content-length: %d" % len(body), *headers]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def _protocol(transport: Recorder) -> HttpToolsProtocol:
    assert transport.protocol is not None
    return transport.protocol


@pytest.mark.parametrize(
    ("protocol", "calls"), [(Protocol, 1), (HttpToolsProtocol, 2)], ids=["ours", "uvicorn"]
)
async def test_an_answer_goes_out_in_one_write(
    protocol: type[HttpToolsProtocol], calls: int
) -> None:
    transport = await _connect(_answer, protocol)
    _protocol(transport).data_received(_post(b"hi"))
    await _settle()
    assert len(transport.calls) == calls
    assert transport.sent().startswith(b"HTTP/1.1 200 OK\r\n")
    assert transport.sent().endswith(b'\r\n\r\n{"echo":"hi"}')


async def test_pipelined_requests_each_get_one_write_in_order() -> None:
    transport = await _connect(_answer)
    _protocol(transport).data_received(_post(b"a") + _post(b"b"))
    await _settle()
    assert [call[-1] for call in transport.calls] == [b'{"echo":"a"}', b'{"echo":"b"}']
    assert all(call[0].startswith(b"HTTP/1.1 200 OK") for call in transport.calls)


async def test_streamed_parts_after_the_first_are_not_held() -> None:
    transport = await _connect(_streamed)
    _protocol(transport).data_received(_post(b""))
    await _settle()
    first, *rest = transport.calls
    assert first[0].startswith(b"HTTP/1.1 200 OK")
    assert first[0].endswith(b"\r\n\r\n")
    assert first[1] == b"3\r\none\r\n"
    assert rest == [[b"3\r\ntwo\r\n"], [b"0\r\n\r\n"]]


async def test_an_answer_without_a_body_sends_its_head() -> None:
    transport = await _connect(_answer)
    _protocol(transport).data_received(b"HEAD /graphql HTTP/1.1\r\nhost: x\r\n\r\n")
    await _settle()
    assert transport.sent().startswith(b"HTTP/1.1 200 OK\r\n")
    assert transport.sent().endswith(b"\r\n\r\n")


async def test_continue_goes_out_before_the_body_is_sent() -> None:
    transport = await _connect(_answer)
    protocol = _protocol(transport)
    request = _post(b"late", b"expect: 100-continue")
    head, _, body = request.partition(b"\r\n\r\n")
    protocol.data_received(head + b"\r\n\r\n")
    await _settle()
    assert transport.calls == [[b"HTTP/1.1 100 Continue\r\n\r\n"]]
    protocol.data_received(body)
    await _settle()
    assert transport.calls[-1][-1] == b'{"echo":"late"}'


async def test_an_oversized_request_head_is_refused() -> None:
    transport = await _connect(_answer)
    big = b"x-big: " + b"a" * MAX_HEAD_BYTES
    _protocol(transport).data_received(_post(b"hi", big))
    await _settle()
    assert transport.sent().startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert transport.closed
    fits = await _connect(_answer)
    _protocol(fits).data_received(_post(b"hi", b"x-big: " + b"a" * (MAX_HEAD_BYTES // 2)))
    await _settle()
    assert fits.sent().endswith(b'{"echo":"hi"}')


async def test_a_request_head_that_never_ends_is_refused() -> None:
    transport = await _connect(_answer)
    protocol = _protocol(transport)
    protocol.data_received(b"POST /graphql HTTP/1.1\r\nhost: x\r\nx-big: ")
    for _ in range(MAX_HEAD_BYTES // 1024 + 1):
        assert not transport.closed
        protocol.data_received(b"a" * 1024)
    await _settle()
    assert transport.sent().startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert transport.closed


async def test_a_large_body_read_with_the_next_head_is_not_refused() -> None:
    transport = await _connect(_answer)
    protocol = _protocol(transport)
    body = b"b" * (MAX_HEAD_BYTES * 2)
    second = _post(b"c")
    protocol.data_received(_post(body) + second[:10])
    for start in range(10, len(second), 10):
        protocol.data_received(second[start : start + 10])
    await _settle()
    assert not transport.closed
    assert transport.sent().endswith(b'{"echo":"c"}')


def test_serve_runs_this_protocol_on_uvloop(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, jwt_secret="protocol-test-secret-" + "s" * 32)
    store = EmbeddedStore(TABLE, path=tmp_path / "keygraph.db")
    try:
        config = config_of(compiled(settings, store), serve.listening(settings))
    finally:
        asyncio.run(store.close())
    assert config.http is Protocol
    assert config.loop == "uvloop"
    assert not config.proxy_headers
    assert config.timeout_keep_alive == round(settings.keep_alive)

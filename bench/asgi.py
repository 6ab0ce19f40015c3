"""An ASGI app called directly, inside this process: one `http` scope a request, the body in
one message, the answer gathered from what the app sends. Nothing stands between the harness
and the app (no URL parsing, no header objects, no transport layers), so a request's time is
the app's own."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.types import ASGIApp, Message


@dataclass(frozen=True)
class Answer:
    status_code: int
    content: bytes

    def json(self) -> Any:
        return orjson.loads(self.content)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


class AsgiClient:
    """POSTs JSON (or GETs a query string) to `app` with `headers` on every request."""

    def __init__(self, app: ASGIApp, headers: Mapping[str, str]) -> None:
        self._app = app
        self._headers = [(b"content-type", b"application/json")] + [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in headers.items()
        ]

    async def post(self, path: str, json: Any) -> Answer:
        return await self.call("POST", path, orjson.dumps(json))

    async def get(self, path: str, query_string: bytes) -> Answer:
        """GET `path` with `query_string` (already URL-encoded)."""
        return await self.call("GET", path, b"", query_string)

    async def call(self, method: str, path: str, body: bytes, query_string: bytes = b"") -> Answer:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode("latin-1"),
            "query_string": query_string,
            "root_path": "",
            "headers": [*self._headers, (b"content-length", str(len(body)).encode())],
            "client": ("127.0.0.1", 1024),
            "server": ("127.0.0.1", 80),
        }
        done = asyncio.Event()
        requested = False
        status = 0
        chunks: list[bytes] = []

        async def receive() -> Message:
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()  # asked again: the client goes away once the answer is in
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    done.set()

        await self._app(scope, receive, send)
        if not done.is_set():
            raise RuntimeError(f"{method} {path}: the app returned before finishing its answer")
        return Answer(status, b"".join(chunks))

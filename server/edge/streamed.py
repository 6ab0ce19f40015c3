"""The HTTP response of a result read in parts: the serialized data spliced with each
part's pieces as it is sent (server/graphql/stream.py), its length known up front."""

from __future__ import annotations

from collections.abc import Iterator

from starlette.responses import Response
from starlette.types import Receive, Scope, Send


class StreamedResponse(Response):
    """A body sent in pieces, never joined into one bytes object."""

    def __init__(
        self, length: int, pieces: Iterator[bytes], *, status_code: int, media_type: str
    ) -> None:
        super().__init__(b"", status_code=status_code, media_type=media_type)
        self.headers["content-length"] = str(length)
        self.pieces = pieces

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = {"type": "http.response.start", "status": self.status_code}
        await send({**start, "headers": self.raw_headers})
        for piece in self.pieces:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

"""The HTTP response of a result read in parts: the serialized data spliced with each
part's pieces as it is sent (parted.py), its length known up front; and `keygraph serve`'s
answers: an operation's parts when it is large, its answer whole or in pieces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from graphql import OperationType
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .admission import Admitted
from .answer import Answer
from .parted import Stream
from .served import MEDIA, Served


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


class StreamedAnswer(StreamedResponse, Answer):
    """An answer to /graphql whose body is sent in pieces."""


def parts_of(served: Served, admitted: Admitted) -> Stream | None:
    """The parts a query is read in when its answer may hold more than `stream_cost`
    objects; None: it is answered in one piece."""
    estimate = admitted.estimate
    query = admitted.operation.operation is OperationType.QUERY
    if not query or estimate is None or estimate.cost <= served.stream_cost:
        return None
    return Stream(served.part_objects, estimate.shape)


def answer_of(body: dict[str, Any], status: int, stream: Stream | None) -> Answer:
    """The answer of `body`, its errors counted: serialized whole, or its data's lists read
    in parts spliced with `stream`'s pieces as they are sent."""
    sent = orjson.dumps(body)
    if stream is None or not stream.parts:
        answer = Answer(sent, status, media_type=MEDIA)
    else:
        length, pieces = stream.body(sent)
        answer = StreamedAnswer(length, pieces, status_code=status, media_type=MEDIA)
    return answer.with_errors(body.get("errors", ()))

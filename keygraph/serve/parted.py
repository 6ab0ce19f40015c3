"""A large response read and sent in parts, by `keygraph serve` and the repository's server
alike. When a query may return more objects than the stream cost (limits.py STREAM_COST),
compiled execution (keygraph/execution/parts.py) completes its outermost list of objects
with work below a few items at a time: each part's loads go out in one wave, and its items
are serialized and freed before the next part is read. Its data then holds a placeholder
for each such list, and the body is sent as the serialized pieces it is spliced from, never
joined: the memory a response takes stays near its size in bytes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from keygraph.api.shape import Shape, count_objects

_MARK = b"\x00"
"""Wraps a placeholder's index in the serialized data: JSON escapes every control character
in strings, so a raw NUL byte appears nowhere else."""
_WRITE = 64 * 1024
"""Bytes of the body sent in one piece, about."""


@dataclass(eq=False, slots=True)
class Part:
    """One list answered in parts: its items serialized, and the objects they hold."""

    shape: Shape
    alive: Callable[[], bool]
    """Whether the list is still in the response (a failure may null it or a parent)."""
    pieces: list[bytes] = field(default_factory=list)
    objects: int = 0

    def add(self, item: Any) -> None:
        """Serializes a completed item; it is freed by the caller. The copy is exact:
        orjson's own bytes keep a sixth more room than they use."""
        self.pieces.append(memoryview(orjson.dumps(item)).tobytes())
        self.objects += count_objects(item, self.shape) if item is not None else 0


@dataclass(eq=False, slots=True)
class Stream:
    """The parts of one request's response, and how many objects a part may read."""

    part_objects: int
    shape: Shape
    """The operation's response shape (cost.py), to count what the parts hold."""
    parts: list[Part] = field(default_factory=list)

    def part(
        self, path: list[str | int], alive: Callable[[], bool]
    ) -> tuple[Part, orjson.Fragment]:
        """A new part for the list at `path`, and the placeholder its data holds."""
        shape = self.shape
        for key in path:
            if isinstance(key, str):
                shape = shape.fields.get(key) or Shape()
        part = Part(shape, alive)
        self.parts.append(part)
        return part, orjson.Fragment(_MARK + str(len(self.parts) - 1).encode() + _MARK)

    def objects(self) -> int:
        """The objects the parts still in the response hold."""
        return sum(part.objects for part in self.parts if part.alive())

    def body(self, skeleton: bytes) -> tuple[int, Iterator[bytes]]:
        """The length and the pieces of the body whose serialized data is `skeleton`: each
        placeholder there spliced with its list's items. Pieces are freed as they are sent."""
        segments = skeleton.split(_MARK)
        length = 0
        for index, segment in enumerate(segments):
            if index % 2 == 0:
                length += len(segment)
            else:
                pieces = self.parts[int(segment)].pieces
                length += sum(map(len, pieces)) + max(len(pieces) - 1, 0) + 2
        return length, self._pieces(segments)

    def _pieces(self, segments: list[bytes]) -> Iterator[bytes]:
        buffer: list[bytes] = []
        size = 0
        for index, segment in enumerate(segments):
            if index % 2 == 0:
                buffer.append(segment)
                size += len(segment)
                continue
            pieces = self.parts[int(segment)].pieces
            buffer.append(b"[")
            for at in range(len(pieces)):
                if at:
                    buffer.append(b",")
                piece, pieces[at] = pieces[at], b""
                buffer.append(piece)
                size += len(piece)
                if size >= _WRITE:
                    yield b"".join(buffer)
                    buffer, size = [], 0
            buffer.append(b"]")
        if buffer:
            yield b"".join(buffer)

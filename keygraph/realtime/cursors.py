"""Event cursors: the subscriber's frontier when it was sent an event (every shard it was
offered, each at the sequence it had, the event's own at the event's: see frontier.py),
signed and bound to the tenant like page cursors (keygraph/cursor.py), so a cursor from
another tenant, or an edited one, is InvalidCursor (INVALID_CURSOR). Cursors of one shard and
sequence, as they were before, still decode."""

from __future__ import annotations

import base64
import binascii

from keygraph.cursor import CursorCodec
from keygraph.errors import InvalidCursor

from .frontier import Frontier, Sequences, pack, shard_key, unpack

_PATTERN = "change-stream"


class EventCursors:
    """Encodes and decodes the cursors of one API's events. The last cursor encoded is
    kept: every subscriber of a change asks for its cursor in turn."""

    def __init__(self, codec: CursorCodec) -> None:
        self._codec = codec
        self._last: tuple[tuple[str, bool, tuple[tuple[str, str | None], ...]], str] | None = None

    def encode(self, tenant: str, sequences: Sequences, whole: bool = True) -> str:
        # subscribers of one change with the same frontier get the same cursor: the last
        # one encoded is kept, so a change is signed once for all of them
        key = (tenant, whole, tuple(sequences.items()))
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        body = {"f": base64.urlsafe_b64encode(pack(sequences)).rstrip(b"=").decode("ascii")}
        if not whole:
            body["o"] = "1"
        cursor = self._codec.encode(tenant, _PATTERN, {}, body)
        self._last = (key, cursor)
        return cursor

    def decode(self, tenant: str, cursor: str) -> Frontier:
        """The frontier `cursor` names; INVALID_CURSOR when it is malformed, edited or
        another tenant's."""
        body = self._codec.decode(cursor, tenant, _PATTERN, {})
        packed, shard_id, sequence = body.get("f"), body.get("s"), body.get("q")
        if isinstance(packed, str):
            try:
                sequences = unpack(base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4)))
            except (ValueError, binascii.Error) as exc:
                raise InvalidCursor("cursor is malformed") from exc
            if not sequences:  # every cursor holds its event's shard at least
                raise InvalidCursor("cursor is malformed")
            return Frontier(sequences, whole="o" not in body)
        if isinstance(shard_id, str) and isinstance(sequence, str):
            return Frontier({shard_key(shard_id): sequence}, whole=False)
        raise InvalidCursor("cursor is malformed")

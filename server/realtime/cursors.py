"""Event cursors: where an event sits in the change stream (its shard and sequence),
signed and bound to the tenant like the server's page cursors (keygraph/cursor.py), so a
cursor from another tenant, or an edited one, is INVALID_CURSOR."""

from __future__ import annotations

from keygraph.cursor import CursorCodec
from keygraph.errors import InvalidCursor
from keygraph.streams import Position
from server.errors import InvalidCursorError

_PATTERN = "change-stream"


class EventCursors:
    """Encodes and decodes the cursors of one server's events. The last cursor encoded is
    kept: every subscriber of a change asks for its cursor in turn."""

    def __init__(self, codec: CursorCodec) -> None:
        self._codec = codec
        self._last: tuple[tuple[str, str, str], str] | None = None

    def encode(self, tenant: str, shard_id: str, sequence: str) -> str:
        key = (tenant, shard_id, sequence)
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        cursor = self._codec.encode(tenant, _PATTERN, {}, {"s": shard_id, "q": sequence})
        self._last = (key, cursor)
        return cursor

    def decode(self, tenant: str, cursor: str) -> Position:
        """The position right after the event `cursor` names; INVALID_CURSOR when it is
        malformed, edited or another tenant's."""
        try:
            body = self._codec.decode(cursor, tenant, _PATTERN, {})
        except InvalidCursor as exc:
            raise InvalidCursorError(str(exc)) from exc
        shard_id, sequence = body.get("s"), body.get("q")
        if not isinstance(shard_id, str) or not isinstance(sequence, str):
            raise InvalidCursorError("cursor is malformed")
        return Position(shard_id, sequence)

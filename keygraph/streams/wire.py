"""Stream records as JSON-ready values, their images in DynamoDB's wire format (numbers,
bytes and sets stay exact): what the relay sends its workers and the Redis Stream holds."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from keygraph.stores.dynamodb.wire import deserialize_item, serialize_item

from .records import StreamRecord


def record_to_wire(record: StreamRecord) -> dict[str, Any]:
    return {
        "sequence": record.sequence,
        "event": record.event,
        "keys": serialize_item(record.keys),
        "old": None if record.old is None else serialize_item(record.old),
        "new": None if record.new is None else serialize_item(record.new),
        "at": record.at.isoformat(),
    }


def record_of_wire(wire: dict[str, Any]) -> StreamRecord:
    return StreamRecord(
        wire["sequence"],
        wire["event"],
        deserialize_item(wire["keys"]),
        None if wire["old"] is None else deserialize_item(wire["old"]),
        None if wire["new"] is None else deserialize_item(wire["new"]),
        datetime.fromisoformat(wire["at"]),
    )

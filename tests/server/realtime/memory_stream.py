"""An in-memory ChangeStream for tests: records are appended by the test (as a store's
change log would for each write), shards can be split (the old one closes, a child goes on)
and trimmed (their oldest records dropped)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from keygraph.plan import Item
from keygraph.streams import Batch, Position, Shard, StreamRecord, Trimmed

KEY_NAMES = ("PK", "SK")


@dataclass
class _Shard:
    shard: Shard
    records: list[StreamRecord] = field(default_factory=list)
    trimmed_to: int = 0
    """Sequences up to this one are gone."""


class MemoryStream:
    def __init__(self) -> None:
        self._sequence = 0
        self._shards: list[_Shard] = [_Shard(Shard("shard-0", None, closed=False))]

    async def shards(self) -> list[Shard]:
        return [s.shard for s in self._shards]

    async def read(self, position: Position, limit: int = 1000) -> Batch:
        found = next((s for s in self._shards if s.shard.shard_id == position.shard_id), None)
        if found is None:
            raise Trimmed(f"no shard {position.shard_id}")
        after = int(position.after) if position.after is not None else found.trimmed_to
        if after < found.trimmed_to:
            raise Trimmed(f"{position} is trimmed")
        records = [r for r in found.records if int(r.sequence) > after][:limit]
        last = records[-1].sequence if records else position.after
        rest = [r for r in found.records if int(r.sequence) > after][limit:]
        ended = found.shard.closed and not rest
        return Batch(records, Position(position.shard_id, last), ended)

    def append(
        self,
        event: Literal["INSERT", "MODIFY", "REMOVE"],
        old: Item | None = None,
        new: Item | None = None,
    ) -> StreamRecord:
        image = new if new is not None else old
        assert image is not None
        self._sequence += 1
        record = StreamRecord(
            sequence=str(self._sequence).zfill(21),
            event=event,
            keys={name: image[name] for name in KEY_NAMES},
            old=old,
            new=new,
            at=datetime.now(UTC),
        )
        self._shards[-1].records.append(record)
        return record

    def split(self) -> None:
        """Closes the open shard; a child continues it."""
        current = self._shards[-1]
        current.shard = Shard(current.shard.shard_id, current.shard.parent_id, closed=True)
        child = Shard(f"shard-{len(self._shards)}", current.shard.shard_id, closed=False)
        self._shards.append(_Shard(child))

    def trim(self) -> None:
        """Drops every record kept so far and every closed shard."""
        self._shards = [s for s in self._shards if not s.shard.closed]
        for kept in self._shards:
            kept.trimmed_to = self._sequence
            kept.records.clear()

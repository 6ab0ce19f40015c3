"""An in-memory ChangeStream for tests: records are appended by the test (as a store's
change log would for each write), shards can be split (the old one closes, a child goes on)
and trimmed (their oldest records dropped). Like DynamoDB Streams, it may hold several
shards open side by side (`lanes`): each record goes to the next lane's open shard in
turn, so the records of consecutive writes interleave across shards."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from keygraph.plan import Item
from keygraph.streams import Batch, Partitions, Position, Shard, StreamRecord, Trimmed

KEY_NAMES = ("PK", "SK")


@dataclass
class _Shard:
    shard: Shard
    records: list[StreamRecord] = field(default_factory=list)
    trimmed_to: int = 0
    """Sequences up to this one are gone."""


class MemoryStream:
    def __init__(self, lanes: int = 1) -> None:
        self._sequence = 0
        self._shards = [_Shard(Shard(f"shard-{n}", None, closed=False)) for n in range(lanes)]
        self._open = list(self._shards)
        """Each lane's open shard."""
        self._turn = 0
        self.lane: int | None = None
        """The lane the next records go to; None: each lane in turn."""

    async def shards(self) -> list[Shard]:
        return [s.shard for s in self._shards]

    async def read(
        self, position: Position, limit: int = 1000, *, within: Partitions | None = None
    ) -> Batch:
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
        if within is None:
            return Batch(records, Position(position.shard_id, last), ended)
        kept = within.kept(records)
        return Batch(kept, Position(position.shard_id, last), ended, len(records) - len(kept))

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
        lane = self._turn % len(self._open) if self.lane is None else self.lane
        self._open[lane].records.append(record)
        self._turn += 1
        return record

    def split(self, lane: int = 0) -> None:
        """Closes a lane's open shard; a child continues it."""
        current = self._open[lane]
        current.shard = Shard(current.shard.shard_id, current.shard.parent_id, closed=True)
        child = _Shard(Shard(f"shard-{len(self._shards)}", current.shard.shard_id, closed=False))
        self._shards.append(child)
        self._open[lane] = child

    def add_lane(self) -> None:
        """Opens a new root shard beside the others (a lane of its own)."""
        shard = _Shard(Shard(f"shard-{len(self._shards)}", None, closed=False))
        self._shards.append(shard)
        self._open.append(shard)

    def trim(self, lane: int | None = None) -> None:
        """Drops every record kept so far and every closed shard; with a `lane`, only the
        records of that lane's open shard."""
        if lane is None:
            self._shards = [s for s in self._shards if not s.shard.closed]
        for kept in self._shards if lane is None else [self._open[lane]]:
            kept.trimmed_to = self._sequence
            kept.records.clear()

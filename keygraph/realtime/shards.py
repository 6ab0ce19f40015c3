"""Following every shard of a change stream in lineage order (a shard's children once it
has been read to its end, open shards side by side), with the frontier event cursors carry,
and the state a reader checkpoints to go on from elsewhere (`state`, `restore`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from keygraph.streams import (
    Batch,
    ChangeStream,
    Position,
    Shard,
    Skipping,
    StreamRecord,
    Trimmed,
)

log = logging.getLogger("keygraph.realtime")

CATCH_UP_PASSES = 100
"""Passes over every shard, at most, to reach the stream's end without handing anything."""

Reading = Callable[[Position], Awaitable[Batch]]
"""A shard's next batch from a position: the stream's read, or its skip."""


@dataclass(frozen=True, slots=True)
class Read:
    """Records read on one shard, with the reader's frontier before them (frontier.py)."""

    shard_id: str
    frontier: Mapping[str, str | None]
    records: list[StreamRecord]


class ShardReader:
    """Where one reader is on every shard of `stream`."""

    def __init__(self, stream: ChangeStream) -> None:
        self.stream = stream
        self._positions: dict[str, Position] = {}
        self._ended: set[str] = set()
        self._ended_at: dict[str, str | None] = {}
        """Shards read to their end whose children are not followed yet: where they ended."""

    async def catch_up(self) -> None:
        """Goes to the end of the stream as it is now, keeping nothing: past each shard's
        records without reading them where the stream can (Skipping)."""
        read: Reading = self.stream.skip if isinstance(self.stream, Skipping) else self.stream.read
        for _ in range(CATCH_UP_PASSES):
            before = self.state()
            await self._guarded(read)
            if self.state() == before:
                return

    async def poll(self) -> list[Read]:
        """Reads each followed shard once; what was found. A poll that fails leaves the
        reader where it was: what it had read of other shards is read again."""
        return await self._guarded(self.stream.read)

    async def _guarded(self, read: Reading) -> list[Read]:
        """A pass of `read` over the followed shards, undone if it fails."""
        before = self.state()
        try:
            return await self._poll(read)
        except BaseException:
            self.restore(before)
            raise

    async def _poll(self, read: Reading) -> list[Read]:
        self._follow(await self.stream.shards())
        reads: list[Read] = []
        for shard_id, position in list(self._positions.items()):
            try:
                batch = await read(position)
            except Trimmed:
                log.warning("change stream shard %s trimmed past the reader", shard_id)
                self._positions[shard_id] = Position(shard_id)
                continue
            if batch.records:
                reads.append(Read(shard_id, self.frontier(), batch.records))
            if batch.ended:
                del self._positions[shard_id]
                self._ended.add(shard_id)
                self._ended_at[shard_id] = batch.next.after
            else:
                self._positions[shard_id] = batch.next
        return reads

    def frontier(self) -> dict[str, str | None]:
        """Each shard the reader follows at the sequence it has read and offered up to
        (None: nothing yet), and each shard it read to its end whose children it does not
        follow yet."""
        out = dict(self._ended_at)
        out.update((shard_id, p.after) for shard_id, p in self._positions.items())
        return out

    def state(self) -> dict[str, Any]:
        """Where the reader is, as JSON values."""
        return {
            "positions": {shard_id: p.after for shard_id, p in self._positions.items()},
            "ended": sorted(self._ended),
            "ended_at": dict(self._ended_at),
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        """Goes back to where `state` says (what `state` gave)."""
        self._positions = {s: Position(s, after) for s, after in state["positions"].items()}
        self._ended = set(state["ended"])
        self._ended_at = dict(state["ended_at"])

    def _follow(self, shards: list[Shard]) -> None:
        """Starts reading each shard whose parent has been read to its end (or is gone)."""
        kept = {shard.shard_id for shard in shards}
        self._ended &= kept
        for shard_id in [s for s in self._positions if s not in kept]:
            del self._positions[shard_id]
        for shard in shards:
            shard_id = shard.shard_id
            if shard_id in self._positions or shard_id in self._ended:
                continue
            parent = shard.parent_id
            if parent is None or parent not in kept or parent in self._ended:
                self._positions[shard_id] = Position(shard_id)
        followed = {s.parent_id for s in shards if s.shard_id in self._positions}
        for shard_id in [s for s in self._ended_at if s not in kept or s in followed]:
            del self._ended_at[shard_id]

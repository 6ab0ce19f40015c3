"""A hub's changes from the Redis Stream the elected reader writes (changes.py): every
host's hub reads it, however many hosts there are, and only the reader reads the table's
change stream. A record appended again by a reader that took over from a checkpoint is
handed on once per shard (by its sequence).

A resume reads the Redis Stream when it holds everything the cursor lacks: it finds the
newest entry with the cursor at or past where the reader was just before that record on
every shard (halving the time the stream spans, each look one entry), and reads on from
there. Where the reader was is the entry's own (`Entry.reached`), not its read's frontier:
a read's records share one, and a cursor may fall between them. A cursor older than what
Redis keeps, or a Redis that does not answer, replays from the change stream instead."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from keygraph.errors import StoreError
from keygraph.realtime.shards import Read
from keygraph.realtime.sources import Replayed
from keygraph.streams import Partitions, Position, Shard

from .changes import ChangeLog, Entry, entries_of, id_order
from .link import TIMEOUT

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger("keygraph.realtime")

BLOCK = 1.0
"""Seconds a read of the Redis Stream waits for an entry."""
PAUSE = 0.5
"""Seconds between tries while Redis does not answer."""
READ = 1000
"""Entries one live read takes."""
REPLAY_READ = 200
"""Entries one read of a replay takes."""


class RedisSource:
    """A hub's source: the Redis Stream of `changes`, read over a client of its own (a
    read waits up to `block` seconds for an entry)."""

    def __init__(
        self,
        changes: ChangeLog,
        url: str,
        *,
        block: float = BLOCK,
        pause: float = PAUSE,
        replayed: Callable[[str], None] = lambda _where: None,
    ) -> None:
        from redis.asyncio import Redis

        self.changes = changes
        self.reading: Redis = Redis.from_url(
            url, socket_timeout=block + TIMEOUT, socket_connect_timeout=TIMEOUT
        )
        self.block_ms = int(block * 1000)
        self.pause = pause
        self._replayed = replayed
        self._last: str | None = None
        self._had: dict[str, int] = {}
        """Per shard, the sequence of the last record handed on."""
        self.up = True

    async def skip(self) -> None:
        try:
            self._last = await self.changes.last_id()
        except self.changes.link.errors as exc:
            self._down(exc)

    async def read(self) -> list[Read]:
        try:
            if self._last is None:
                self._last = await self.changes.last_id()
            raw = await self.reading.xread(
                {self.changes.key: self._last}, count=READ, block=self.block_ms
            )
        except self.changes.link.errors as exc:
            self._down(exc)
            await asyncio.sleep(self.pause)
            return []
        if not self.up:
            self.up = True
            log.warning("the Redis Stream of changes answers again")
        if not raw:
            return []
        entries = entries_of(raw[0][1])
        self._last = entries[-1].id
        return self._reads(entries)

    def _reads(self, entries: list[Entry]) -> list[Read]:
        reads: list[Read] = []
        for entry in entries:
            sequence = int(entry.sequence)
            had = self._had.get(entry.shard_id)
            if had is not None and sequence <= had:
                continue
            self._had[entry.shard_id] = sequence
            record = entry.record()
            last = reads[-1] if reads else None
            if last is not None and (last.shard_id, last.frontier) == (
                entry.shard_id,
                entry.frontier,
            ):
                last.records.append(record)
            else:
                reads.append(Read(entry.shard_id, entry.frontier, [record]))
        if len(self._had) > 2 * len(entries[-1].frontier) + 64:  # shards the reader left
            kept = entries[-1].frontier
            self._had = {s: q for s, q in self._had.items() if s in kept}
        return reads

    def _down(self, exc: BaseException) -> None:
        if self.up:
            self.up = False
            log.warning("the Redis Stream of changes cannot be read (%s): trying again", exc)

    async def replay(
        self,
        positions: list[Position],
        shards: list[Shard],
        within: Partitions,
        pay: Callable[[int], None],
    ) -> Replayed | None:
        after = {p.shard_id: p.after for p in positions}
        parents = {shard.shard_id: shard.parent_id for shard in shards}
        try:
            start = await self._start(after, parents)
        except self.changes.link.errors as exc:
            log.warning("a resume reads the change stream: Redis did not answer (%s)", exc)
            start = None
        self._replayed("stream" if start is None else "redis")
        return None if start is None else self._replay(start, after, within, pay)

    async def _start(
        self, after: Mapping[str, str | None], parents: Mapping[str, str | None]
    ) -> Entry | None:
        """The newest entry from which the stream holds every record the resume needs, as
        found a millisecond at a time; None when even the oldest kept does not."""
        low = await self.changes.first_from("-")
        if low is None or not holds(low, after, parents):
            return None
        newest = await self.changes.first_from(await self.changes.last_id())
        if newest is None or holds(newest, after, parents):
            return newest or low
        high = newest.ms
        while (middle := (low.ms + high) // 2) > low.ms:
            entry = await self.changes.first_from(middle)
            if entry is not None and holds(entry, after, parents):
                low = entry
            else:
                high = middle
        return low

    async def _replay(
        self,
        start: Entry,
        after: Mapping[str, str | None],
        within: Partitions,
        pay: Callable[[int], None],
    ) -> Replayed:
        had = {s: None if q is None else int(q) for s, q in after.items()}
        at, bound = start.id, start.id
        while True:
            try:
                entries, oldest = await self.changes.after(at, REPLAY_READ)
            except self.changes.link.errors as exc:
                raise StoreError(f"the Redis Stream of changes did not answer: {exc}") from exc
            if oldest is None or id_order(oldest) > id_order(bound):
                raise StoreError("the Redis Stream was trimmed under a resume: resume again")
            pay(1 + len(entries))
            for entry in entries:
                if entry.shard_id not in had:
                    continue  # an ancestor of the cursor's shards: the subscriber has it
                sequence, held = int(entry.sequence), had[entry.shard_id]
                if held is not None and sequence <= held:
                    continue
                had[entry.shard_id] = sequence
                if within.holds(entry.partition):
                    yield entry.shard_id, entry.record()
            if len(entries) < REPLAY_READ:
                return
            bound = entries[-1].id
            at = f"({bound}"
            await asyncio.sleep(0)  # other requests run between two reads

    async def close(self) -> None:
        await self.reading.aclose()


def holds(entry: Entry, after: Mapping[str, str | None], parents: Mapping[str, str | None]) -> bool:
    """Whether every record after `after` (per shard) lies at or after `entry`: just before
    it, the reader had appended no shard past what the cursor has, and had left none
    behind."""
    frontier = entry.reached()
    left: set[str] = set()
    for shard_id in frontier:
        parent = parents.get(shard_id)
        while parent is not None and parent not in left:
            left.add(parent)
            parent = parents.get(parent)
    for shard_id, sequence in after.items():
        if shard_id in frontier:
            read = frontier[shard_id]
            if read is not None and (sequence is None or int(sequence) < int(read)):
                return False
        elif shard_id in left:
            return False
    return True

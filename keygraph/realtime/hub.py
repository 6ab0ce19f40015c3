"""A process's one reader of the table's change stream and the subscriptions it feeds.

The reader follows every shard in lineage order (a shard's children once it has ended) and
hands each record's change (as the API's `decode` reads it) to the feeds registered under
its (tenant, topic), in stream order: an event costs a lookup per topic and a put per
matching feed. A position trimmed away under the reader (it fell more than the retention
behind) goes on from the oldest record kept. Each change carries the reader's frontier when
it was read (every shard it follows, and each shard read to its end whose children it does
not follow yet, at the sequence read up to), which event cursors carry. A subscription
resuming after a cursor replays what the stream still holds after it (`replay`), its feed
registered first so nothing between falls in a gap. A replay reads only its tenant's
records where the stream can skip the others, pays for every record read and every read,
and lets the loop run between reads: resuming from an old cursor is bounded by the
subscriber's own budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from keygraph.errors import StoreError
from keygraph.streams import ChangeStream, Partitions, Position, Shard, Trimmed

from .changes import Change, Decode, Topic
from .feed import Feed

log = logging.getLogger("keygraph.realtime")

_CATCH_UP_PASSES = 100
"""Reads through every shard at start, at most, before live delivery begins."""
REPLAY_READ = 200
"""Records one read of a replay asks for: what it decodes between two turns of the loop."""


class Hub:
    """The reader task of one worker and the feeds it delivers to."""

    def __init__(self, stream: ChangeStream, poll_interval: float, decode: Decode) -> None:
        self.stream = stream
        self.poll_interval = poll_interval
        self.decode = decode
        self._feeds: dict[tuple[str, Topic], set[Feed]] = {}
        self._positions: dict[str, Position] = {}
        self._ended: set[str] = set()
        self._ended_at: dict[str, str | None] = {}
        """Shards read to their end whose children are not followed yet: where they ended."""
        self._task: asyncio.Task[None] | None = None
        self.delivered = 0
        """Changes handed to feeds since start."""

    async def start(self) -> None:
        """Reads the stream up to now without delivering, then follows it in a task."""
        for _ in range(_CATCH_UP_PASSES):
            if not await self._poll_once(deliver=False):
                break
        self._task = asyncio.create_task(self._run(), name="keygraph-stream-reader")

    async def stop(self) -> None:
        """Stops the reader, and closes the stream's own connections if it has any (the
        DynamoDB Streams reader does)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        close = getattr(self.stream, "close", None)
        if close is not None:
            await close()

    @property
    def open_feeds(self) -> int:
        """The feeds of running subscriptions the reader delivers to."""
        return sum(len(feeds) for feeds in self._feeds.values())

    def open(self, tenant: str, topic: Topic) -> Feed:
        feed = Feed(tenant, topic)
        self._feeds.setdefault((tenant, topic), set()).add(feed)
        return feed

    def close(self, feed: Feed) -> None:
        key = (feed.tenant, feed.topic)
        feeds = self._feeds.get(key)
        if feeds is not None:
            feeds.discard(feed)
            if not feeds:
                del self._feeds[key]

    async def _run(self) -> None:
        while True:
            try:
                read = await self._poll_once(deliver=True)
            except (StoreError, OSError) as exc:
                log.warning("change stream not read: %s", exc)
                read = 0
            if not read:
                await asyncio.sleep(self.poll_interval)

    async def _poll_once(self, *, deliver: bool) -> int:
        """Reads each followed shard once; the number of records read."""
        shards = await self.stream.shards()
        self._follow(shards)
        read = 0
        for shard_id, position in list(self._positions.items()):
            try:
                batch = await self.stream.read(position)
            except Trimmed:
                log.warning("change stream shard %s trimmed past the reader", shard_id)
                self._positions[shard_id] = Position(shard_id)
                continue
            if deliver and batch.records:
                frontier = self.frontier()
                for record in batch.records:
                    change = self.decode(record, shard_id, frontier)
                    if change is not None:
                        self._publish(change)
            read += len(batch.records)
            if batch.ended:
                del self._positions[shard_id]
                self._ended.add(shard_id)
                self._ended_at[shard_id] = batch.next.after
            else:
                self._positions[shard_id] = batch.next
        return read

    def frontier(self) -> dict[str, str | None]:
        """Each shard the reader follows at the sequence it has read and offered up to
        (None: nothing yet), and each shard it read to its end whose children it does not
        follow yet."""
        out = dict(self._ended_at)
        out.update((shard_id, p.after) for shard_id, p in self._positions.items())
        return out

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

    def _publish(self, change: Change) -> None:
        for topic in change.topics:
            for feed in self._feeds.get((change.tenant, topic), ()):
                feed.offer(change)
                self.delivered += 1

    async def replay(
        self,
        positions: list[Position],
        trimmed: Callable[[], Awaitable[None]],
        within: Partitions,
        pay: Callable[[int], None],
    ) -> AsyncIterator[Change]:
        """The changes the stream holds after each of `positions` (in lineage order) on
        items `within` the partitions, each shard up to its end now. Each read costs `pay`
        a point, and one for each record it decoded (kept or skipped); `pay` raises to end
        the replay. A position no longer held calls `trimmed`, then its shard is read from
        the oldest record kept (or skipped, when the shard is gone)."""
        for start in positions:
            position = start
            while True:
                try:
                    batch = await self.stream.read(position, REPLAY_READ, within=within)
                except Trimmed:
                    await trimmed()
                    if position.after is None:
                        break
                    position = Position(position.shard_id)
                    continue
                pay(1 + len(batch.records) + batch.skipped)
                for record in batch.records:
                    change = self.decode(record, position.shard_id, {})
                    if change is not None:
                        yield change
                if batch.ended or batch.next == position:
                    break
                position = batch.next
                await asyncio.sleep(0)  # other requests run between two reads

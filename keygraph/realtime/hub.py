"""A process's one reader of the table's changes and the subscriptions it feeds.

The reader takes what its source reads (sources.py: the change stream, every shard in
lineage order, or the Redis Stream one elected reader writes it to) and hands each record's
change (as the API's `decode` reads it) to the feeds registered under
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
from .sources import Source, StreamSource

log = logging.getLogger("keygraph.realtime")

REPLAY_READ = 200
"""Records one read of a replay asks for: what it decodes between two turns of the loop."""


class Hub:
    """The reader task of one worker and the feeds it delivers to. Its changes come from
    `source`, by default the change stream read here; a resume plans on the change stream,
    and reads it where the source does not hold what it needs."""

    def __init__(
        self,
        stream: ChangeStream,
        poll_interval: float,
        decode: Decode,
        source: Source | None = None,
    ) -> None:
        self.stream = stream
        self.poll_interval = poll_interval
        self.decode = decode
        self.source = StreamSource(stream, poll_interval) if source is None else source
        self._feeds: dict[tuple[str, Topic], set[Feed]] = {}
        self._task: asyncio.Task[None] | None = None
        self.delivered = 0
        """Changes handed to feeds since start."""

    async def start(self) -> None:
        """Goes to the end of the source without delivering, then follows it in a task."""
        await self.source.skip()
        self._task = asyncio.create_task(self._run(), name="keygraph-stream-reader")

    async def stop(self) -> None:
        """Stops the reader, and closes the source and the stream's own connections if it
        has any (the DynamoDB Streams reader does)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.source.close()
        close = getattr(self.stream, "close", None)
        if close is not None:
            await close()

    @property
    def open_feeds(self) -> int:
        """The feeds of running subscriptions the reader delivers to (one of several topics
        counts once)."""
        return len({feed for feeds in self._feeds.values() for feed in feeds})

    def open(self, tenant: str, topic: Topic, *also: Topic) -> Feed:
        """A feed of the changes on `topic` and on each of `also`, each change once."""
        feed = Feed(tenant, topic, also)
        for each in (topic, *also):
            self._feeds.setdefault((tenant, each), set()).add(feed)
        return feed

    def close(self, feed: Feed) -> None:
        for each in (feed.topic, *feed.also):
            key = (feed.tenant, each)
            feeds = self._feeds.get(key)
            if feeds is not None:
                feeds.discard(feed)
                if not feeds:
                    del self._feeds[key]

    async def _run(self) -> None:
        while True:
            try:
                reads = await self.source.read()
            except (StoreError, OSError) as exc:
                log.warning("change stream not read: %s", exc)
                await asyncio.sleep(self.poll_interval)
                continue
            for read in reads:
                for record in read.records:
                    change = self.decode(record, read.shard_id, read.frontier)
                    if change is not None:
                        self._publish(change)

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
        shards: list[Shard] | None = None,
    ) -> AsyncIterator[Change]:
        """The changes the stream holds after each of `positions` (in lineage order) on
        items `within` the partitions, each shard up to its end now; from the source when
        it holds them all (the positions are a plan over `shards`). Each read costs `pay`
        a point, and one for each record it decoded (kept or skipped); `pay` raises to end
        the replay. A position no longer held calls `trimmed`, then its shard is read from
        the oldest record kept (or skipped, when the shard is gone)."""
        if shards is not None:
            held = await self.source.replay(positions, shards, within, pay)
            if held is not None:
                async for shard_id, record in held:
                    change = self.decode(record, shard_id, {})
                    if change is not None:
                        yield change
                return
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

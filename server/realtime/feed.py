"""One subscription's feed: the changes on its (tenant, topic) the stream reader hands it,
queued in stream order until the subscription's task sends them."""

from __future__ import annotations

import asyncio

from server.realtime.changes import Change, Topic

MAX_QUEUED = 10_000
"""Changes a feed holds for a subscriber that does not keep up; past it the feed is lost."""


class Feed:
    """The queue of one subscription, registered with the hub under (tenant, topic)."""

    def __init__(self, tenant: str, topic: Topic) -> None:
        self.tenant = tenant
        self.topic = topic
        self.lost = False
        """Set when the subscriber fell more than MAX_QUEUED changes behind."""
        self._queue: asyncio.Queue[Change | None] = asyncio.Queue()

    def offer(self, change: Change) -> None:
        if self.lost:
            return
        if self._queue.qsize() >= MAX_QUEUED:
            self.lost = True
            self._queue.put_nowait(None)
            return
        self._queue.put_nowait(change)

    async def next(self) -> Change | None:
        """The next change; None once the feed is lost."""
        return await self._queue.get()

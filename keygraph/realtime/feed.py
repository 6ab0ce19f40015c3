"""One subscription's feed: the changes on its (tenant, topic) the stream reader hands it,
queued in stream order until the subscription's task sends them."""

from __future__ import annotations

import asyncio
from collections import deque

from .changes import Change, Topic

MAX_QUEUED = 10_000
"""Changes a feed holds for a subscriber that does not keep up; past it the feed is lost."""


class Feed:
    """The queue of one subscription, registered with the hub under (tenant, topic)."""

    def __init__(self, tenant: str, topic: Topic) -> None:
        self.tenant = tenant
        self.topic = topic
        self.lost = False
        """Set when the subscriber fell more than MAX_QUEUED changes behind."""
        # one deque, made at the first change, and a future while waiting, not an
        # asyncio.Queue (three deques and an Event, 3 KB): an idle subscription holds little
        self._queued: deque[Change | None] | None = None
        self._waiting: asyncio.Future[None] | None = None

    def offer(self, change: Change) -> None:
        if self.lost:
            return
        if self._queued is not None and len(self._queued) >= MAX_QUEUED:
            self.lost = True
            self._put(None)
            return
        self._put(change)

    def _put(self, change: Change | None) -> None:
        if self._queued is None:
            self._queued = deque()
        self._queued.append(change)
        waiting = self._waiting
        if waiting is not None and not waiting.done():
            waiting.set_result(None)

    async def next(self) -> Change | None:
        """The next change; None once the feed is lost."""
        while not self._queued:
            self._waiting = asyncio.get_running_loop().create_future()
            try:
                await self._waiting
            finally:
                self._waiting = None
        assert self._queued is not None
        return self._queued.popleft()

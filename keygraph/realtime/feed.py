"""One subscription's feed: the changes on its (tenant, topic) the stream reader hands it
(or on several topics, each change once), queued in stream order until the subscription's
task sends them, and where the subscriber is in the stream (`had`). `Feeds` opens and
closes them: the hub, or what fans a change out to many feeds at once."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Protocol

from .changes import Change, Topic

MAX_QUEUED = 10_000
"""Changes a feed holds for a subscriber that does not keep up; past it the feed is lost."""


class Feed:
    """The queue of one subscription, registered with the hub under (tenant, topic) and
    under each of `also`."""

    def __init__(self, tenant: str, topic: Topic, also: tuple[Topic, ...] = ()) -> None:
        self.tenant = tenant
        self.topic = topic
        self.also = also
        self.lost = False
        """Set when the subscriber fell more than MAX_QUEUED changes behind."""
        # one deque, made at the first change, and a future while waiting, not an
        # asyncio.Queue (three deques and an Event, 3 KB): an idle subscription holds little
        self._queued: deque[Change | None] | None = None
        self._waiting: asyncio.Future[None] | None = None
        self.had: dict[str, str | None] = {}
        """Per shard, the last sequence the subscriber has (its cursor's, then its
        replay's; None: none): a change at or before it is not sent again."""

    @property
    def idle(self) -> bool:
        """The subscriber waits for its next change, with none queued: a change may be
        sent to it without going through its task."""
        waiting = self._waiting
        return waiting is not None and not waiting.done() and not self._queued

    def lose(self) -> None:
        """Ends the feed as one its subscriber fell too far behind."""
        if not self.lost:
            self.lost = True
            self._put(None)

    def offer(self, change: Change) -> None:
        if self.lost:
            return
        if self.also and self._queued and self._queued[-1] is change:
            return  # offered again on another of its topics, in the same turn
        if self._queued is not None and len(self._queued) >= MAX_QUEUED:
            self.lose()
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


class Feeds(Protocol):
    """Where a subscription's feed is opened and closed."""

    def open(self, tenant: str, topic: Topic) -> Feed: ...

    def close(self, feed: Feed) -> None: ...

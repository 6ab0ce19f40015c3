"""One subscription's changes: what the stream still holds after its cursor (replayed), then
live ones from the hub, none twice at the seam and none at or before the cursor, each the
subscriber may see with the cursor to resume after it."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable

from keygraph.streams import Partitions

from .changes import Change, Topic
from .cursors import EventCursors
from .feed import Feeds
from .frontier import Frontier, Sequences, merged, plan
from .hub import Hub


class FeedLost(Exception):
    """The subscriber fell more changes behind than its feed holds."""


async def follow(
    hub: Hub,
    cursors: EventCursors,
    tenant: str,
    topic: Topic,
    after: Frontier | None,
    visible: Callable[[Change], bool],
    *,
    within: Partitions,
    pay: Callable[[int], None],
    trimmed: Callable[[], Awaitable[None]],
    feeds: Feeds | None = None,
    also: tuple[Topic, ...] = (),
    started: Callable[[], None] = lambda: None,
) -> AsyncGenerator[tuple[Change, str]]:
    """The changes of `topic` (and of each of `also`) in `tenant` after `after` (None:
    from now) that are `visible`, each with its cursor. The feed is opened with `feeds`
    (the hub's own by default, and always for several topics). A replay reads only
    `within`, pays `pay` per read and record, and calls `trimmed` once when the cursor
    names changes no longer kept. Raises FeedLost when the subscriber falls too far
    behind. `started` is called once the feed is open."""
    opened: Feeds = hub if feeds is None or also else feeds
    feed = hub.open(tenant, topic, *also) if also else opened.open(tenant, topic)
    topics = (topic, *also)
    try:
        started()
        # the reader may hand the feed what the cursor or the replay had (it may not have
        # read them yet): they are not sent again
        had = feed.had
        if after is not None:
            shards = await hub.stream.shards()
            resumed = plan(shards, after)
            whole = after.whole or resumed.lost
            had.update((p.shard_id, p.after) for p in resumed.positions)
            told = False

            async def trimmed_once() -> None:
                nonlocal told
                if not told:
                    told = True
                    await trimmed()

            if resumed.lost:
                await trimmed_once()
            async for change in hub.replay(resumed.positions, trimmed_once, within, pay, shards):
                had[change.shard_id] = change.sequence
                on = any(each in change.topics for each in topics)
                if change.tenant == tenant and on and visible(change):
                    yield change, _cursor(cursors, tenant, change, had, whole)
        while True:
            live = await feed.next()
            if live is None:
                raise FeedLost("the subscriber fell too far behind its events")
            if visible(live) and not has(had, live):
                yield live, live_cursor(cursors, live, had)
    finally:
        opened.close(feed)


def has(had: Sequences, change: Change) -> bool:
    """Whether a subscriber that `had` these sequences has `change` already."""
    held = had.get(change.shard_id)
    return held is not None and int(change.sequence) <= int(held)


def live_cursor(cursors: EventCursors, change: Change, had: Sequences) -> str:
    """The cursor of a live change for a subscriber that `had` these sequences."""
    sequences = merged(change.frontier, had) if had else change.frontier
    return _cursor(cursors, change.tenant, change, sequences)


def _cursor(
    cursors: EventCursors, tenant: str, change: Change, sequences: Sequences, whole: bool = True
) -> str:
    return cursors.encode(tenant, {**sequences, change.shard_id: change.sequence}, whole)

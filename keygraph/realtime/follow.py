"""One subscription's changes: what the stream still holds after its cursor (replayed), then
live ones from the hub, none twice at the seam and none at or before the cursor, each the
subscriber may see with the cursor to resume after it."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable

from keygraph.streams import Partitions

from .changes import Change, Topic
from .cursors import EventCursors
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
) -> AsyncGenerator[tuple[Change, str]]:
    """The changes of `topic` in `tenant` after `after` (None: from now) that are
    `visible`, each with its cursor. A replay reads only `within`, pays `pay` per read
    and record, and calls `trimmed` once when the cursor names changes no longer kept.
    Raises FeedLost when the subscriber falls too far behind."""
    feed = hub.open(tenant, topic)
    try:
        # per shard, the last sequence the subscriber has (None: none): its cursor's, then
        # its replay's; the reader may hand the feed any of these later (it may not have
        # read them yet), and they are not sent again
        had: dict[str, str | None] = {}
        if after is not None:
            resumed = plan(await hub.stream.shards(), after)
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
            async for change in hub.replay(resumed.positions, trimmed_once, within, pay):
                had[change.shard_id] = change.sequence
                if change.tenant == tenant and topic in change.topics and visible(change):
                    yield change, _cursor(cursors, tenant, change, had, whole)
        while True:
            live = await feed.next()
            if live is None:
                raise FeedLost("the subscriber fell too far behind its events")
            held = had.get(live.shard_id)
            if held is not None and int(live.sequence) <= int(held):
                continue
            if visible(live):
                sequences = merged(live.frontier, had) if had else live.frontier
                yield live, _cursor(cursors, tenant, live, sequences)
    finally:
        hub.close(feed)


def _cursor(
    cursors: EventCursors, tenant: str, change: Change, sequences: Sequences, whole: bool = True
) -> str:
    return cursors.encode(tenant, {**sequences, change.shard_id: change.sequence}, whole)

"""Where a hub's changes come from: the table's change stream read by the hub itself
(`StreamSource`), or what one elected reader wrote of it to a Redis Stream
(keygraph/shared/source.py). Either hands the hub reads of records with the frontier they
were read at, so event cursors are the same whichever serves them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Protocol

from keygraph.streams import ChangeStream, Partitions, Position, Shard, StreamRecord, Waking

from .shards import Read, ShardReader

Replayed = AsyncIterator[tuple[str, StreamRecord]]
"""A replay's records, each with its shard."""


class Source(Protocol):
    """What feeds a hub."""

    async def skip(self) -> None:
        """Goes to the end of what is there now, handing nothing."""
        ...

    async def read(self) -> list[Read]:
        """What came next, waiting a while when nothing did (then: none)."""
        ...

    async def replay(
        self,
        positions: list[Position],
        shards: list[Shard],
        within: Partitions,
        pay: Callable[[int], None],
    ) -> Replayed | None:
        """The records after `positions` (a resume's plan over `shards`) within the
        partitions, when this source holds them all; None: the change stream is read."""
        ...

    async def close(self) -> None: ...


class StreamSource:
    """The change stream, read by this process."""

    def __init__(self, stream: ChangeStream, poll_interval: float) -> None:
        self.reader = ShardReader(stream)
        self.poll_interval = poll_interval
        self._waking = stream if isinstance(stream, Waking) else None

    async def skip(self) -> None:
        await self.reader.catch_up()

    async def read(self) -> list[Read]:
        reads = await self.reader.poll()
        if not reads:  # the next poll comes when told of a write, at the latest after one interval
            if self._waking is not None:
                await self._waking.wait_for_writes(self.poll_interval)
            else:
                await asyncio.sleep(self.poll_interval)
        return reads

    async def replay(
        self,
        positions: list[Position],
        shards: list[Shard],
        within: Partitions,
        pay: Callable[[int], None],
    ) -> Replayed | None:
        return None

    async def close(self) -> None:
        return None

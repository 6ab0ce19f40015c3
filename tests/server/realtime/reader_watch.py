"""A store's own change stream as the app's stream reader reads it, noting which records
that reader has read, so that a test can wait until the reader has read (and handed to the
subscriptions) everything written so far: `caught_up` writes a marker item and waits for it.
A test can also hold the reader back (`hold`, `release`), so that writes reach a resuming
subscription both from its replay and, later, live. The records pass through unchanged."""

from __future__ import annotations

import asyncio
import itertools

from keygraph.plan import Put
from keygraph.store import Store
from keygraph.streams import Batch, ChangeStream, Partitions, Position, Shard

READER_TASK = "keygraph-stream-reader"
"""The name of the hub's reader task (keygraph/realtime/hub.py); replays run in others."""
MARKER = "MARKER#"


class ReaderWatch:
    """`stream` of `store`, noting the marker items the hub's reader task read."""

    def __init__(self, stream: ChangeStream, store: Store, wait: float = 15.0) -> None:
        self.stream = stream
        self.store = store
        self.wait = wait
        self._markers = itertools.count(1)
        self._read: set[str] = set()
        self._arrived = asyncio.Event()
        self._open = asyncio.Event()
        self._open.set()
        self._parked = asyncio.Event()

    async def shards(self) -> list[Shard]:
        return await self.stream.shards()

    async def read(
        self, position: Position, limit: int = 1000, *, within: Partitions | None = None
    ) -> Batch:
        task = asyncio.current_task()
        reader = task is not None and task.get_name() == READER_TASK
        if reader and not self._open.is_set():
            self._parked.set()
            await self._open.wait()
        batch = await self.stream.read(position, limit, within=within)
        if reader:
            for record in batch.records:
                key = record.keys.get("PK")
                if isinstance(key, str) and key.startswith(MARKER):
                    self._read.add(key)
                    self._arrived.set()
        return batch

    async def close(self) -> None:
        close = getattr(self.stream, "close", None)
        if close is not None:
            await close()

    async def caught_up(self) -> None:
        """Returns once the reader has read every change written to the store before the call
        (a stream of one shard, as both stores' are here, keeps them in order) and handed
        each to the subscriptions: it reads a batch, then delivers all of it before its next
        await."""
        marker = f"{MARKER}{next(self._markers)}"
        await self.store.put(Put(item={"PK": marker, "SK": marker}))
        async with asyncio.timeout(self.wait):
            while marker not in self._read:
                self._arrived.clear()
                await self._arrived.wait()

    async def hold(self) -> None:
        """Returns once the reader waits before its next read (none is under way)."""
        self._open.clear()
        self._parked.clear()
        async with asyncio.timeout(self.wait):
            await self._parked.wait()

    def release(self) -> None:
        self._open.set()

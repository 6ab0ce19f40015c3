"""The one reader of the table's change stream for every host, when hosts share Redis:
each host runs a contender, the lease in the table (lease.py) elects one, and that one
appends every record it reads to the Redis Stream (keygraph/shared/changes.py) under its
term, and checkpoints where it is on every shard in the lease with each renewal.

A reader that dies (killed, cut off from the table) stops renewing; another contender
takes the lease once it has run out and goes on from the checkpoint, so records read after
the last checkpoint are appended again (hubs hand each on once) and none is lost. One that
is cancelled, or whose lease ran out on its own clock while it was held up, releases the
lease with its checkpoint unless another contender took it. A reader that lost the lease
without knowing it is fenced off: its renewal and its appends are refused by the lease's
version and its term. The first reader ever starts at the stream's end. While Redis cannot
be reached the reader keeps its place and tries again. The lease's own records are not
appended."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from keygraph.errors import StoreError
from keygraph.shared.changes import ChangeLog
from keygraph.streams import ChangeStream

from .lease import Lease
from .shards import Read, ShardReader

log = logging.getLogger("keygraph.realtime")

CONTEND_EVERY = 8
"""A contender looks at the lease this many times a lease's duration."""
RENEW_EVERY = 3
"""A holder renews (and checkpoints) this many times a lease's duration."""


class ElectedReader:
    """One contender: `run` until cancelled."""

    def __init__(
        self,
        stream: ChangeStream,
        lease: Lease,
        changes: ChangeLog,
        poll_interval: float,
        *,
        leading: Callable[[bool], None] = lambda _held: None,
        appended: Callable[[int], None] = lambda _records: None,
    ) -> None:
        self.stream = stream
        self.lease = lease
        self.changes = changes
        self.poll_interval = poll_interval
        self._leading = leading
        self._appended = appended
        self.takes = 0
        """Times this contender took the lease."""
        self._state: Mapping[str, Any] | None = None
        """Where the reader is, appended up to: the checkpoint its renewals write."""

    async def run(self) -> None:
        while True:
            try:
                taken = await self.lease.take()
            except (StoreError, OSError) as exc:
                log.warning("the stream reader's lease was not read: %s", exc)
                taken = False
            if taken:
                await self._lead()
            else:
                await asyncio.sleep(self.lease.duration / CONTEND_EVERY)

    async def _lead(self) -> None:
        self.takes += 1
        term = self.lease.term
        assert term is not None
        reader = ShardReader(self.stream)
        if self.lease.state is None:
            await reader.catch_up()
        else:
            reader.restore(orjson.loads(self.lease.state))
        self._state = reader.state()
        with contextlib.suppress(StoreError, OSError):  # the checkpoint of a first reader
            await self.lease.renew(self._checkpoint())
        log.info("reading the change stream for every host (term %d)", term)
        self._leading(True)
        renewing = asyncio.create_task(self._renew(), name="keygraph-reader-lease")
        try:
            await self._read(reader, term)
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing
            self._leading(False)
            await self._release()
        log.warning("the stream reader's lease was lost (term %d)", term)

    async def _read(self, reader: ShardReader, term: int) -> None:
        """Appends what the stream holds until the lease is lost."""
        partition = next(iter(self.lease.key.items()))
        while self.lease.held:
            before = reader.state()
            try:
                reads = _without(await reader.poll(), partition)
            except (StoreError, OSError) as exc:
                log.warning("change stream not read: %s", exc)
                reads = []
            if not reads:
                await asyncio.sleep(self.poll_interval)
                continue
            if not self.lease.held:
                return
            try:
                appended = await self.changes.append(term, reads)
            except self.changes.link.errors as exc:
                log.warning("changes not appended to Redis (%s): trying again", exc)
                reader.restore(before)
                await asyncio.sleep(self.poll_interval)
                continue
            if not appended:  # a later term appends: this reader is fenced off
                self.lease.version = None
                return
            self._state = reader.state()
            self._appended(sum(len(read.records) for read in reads))

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self.lease.duration / RENEW_EVERY)
            try:
                if not await self.lease.renew(self._checkpoint()):
                    return
            except (StoreError, OSError) as exc:
                log.warning("the stream reader's lease was not renewed: %s", exc)

    async def _release(self) -> None:
        """Checkpoints and lets another contender take over at once, unless one took the
        lease already (the write is fenced by its version)."""
        if self.lease.version is None:
            return
        with contextlib.suppress(StoreError, OSError):
            await self.lease.renew(self._checkpoint(), release=True)

    def _checkpoint(self) -> str:
        return orjson.dumps(self._state).decode()


def _without(reads: list[Read], partition: tuple[str, Any]) -> list[Read]:
    """`reads` without the records of the lease's own partition."""
    attribute, value = partition
    kept = []
    for read in reads:
        records = [r for r in read.records if r.keys.get(attribute) != value]
        if records:
            kept.append(Read(read.shard_id, read.frontier, records))
    return kept

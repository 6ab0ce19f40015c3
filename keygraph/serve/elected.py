"""One reader of the change stream for every host sharing Redis: each worker's hub reads
the Redis Stream of changes (keygraph/shared/source.py), and each worker contends for the
lease in the table that elects the one reader appending the change stream to it
(keygraph/realtime/reader.py). DynamoDB Streams serve about two readers a shard: one per
host would be throttled. Loaded only with a Redis URL (redis-py comes with it)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid

from keygraph.plan import TableDef
from keygraph.realtime.lease import Lease
from keygraph.realtime.reader import ElectedReader
from keygraph.shared.changes import ChangeLog
from keygraph.shared.link import Link, key_prefix
from keygraph.shared.source import RedisSource
from keygraph.store import Session, Store
from keygraph.streams import ChangeStream

from .metrics import RESUMES_BY, STREAM_APPENDED, STREAM_READER, STREAM_READER_TAKES
from .reader_settings import ReaderSettings

LEASE_PARTITION = "~KEYGRAPH#READER"
"""The lease's partition: no key template's literal text holds `~`, so no item of the
spec lies there (idempotency.py keeps its records the same way)."""


class Elected:
    """A worker's part: the hub's source, made for the hub's change stream (`source`), and
    its contender for the lease on `store` (`table`'s key, its name in Redis's keys), as
    `settings` say, reading the hub's stream every `poll` seconds when it found nothing,
    run from the app's start (`start`) until the source closes or the app stops (`close`)."""

    def __init__(
        self,
        store: Store,
        table: TableDef,
        url: str,
        settings: ReaderSettings,
        poll: float,
    ) -> None:
        self.url = url
        self.link = Link(url)
        self.changes = ChangeLog(
            self.link,
            f"{key_prefix(table.name)}changes",
            settings.redis_stream_retention,
            settings.redis_stream_max,
            table.partition_key,
        )
        key = {table.partition_key: LEASE_PARTITION, table.sort_key: table.name}
        holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.lease = Lease(store, key, settings.reader_lease, holder)
        self.poll = poll
        self.reader: ElectedReader | None = None
        """The contender, once the hub's stream is known (none: no hub)."""
        self._task: asyncio.Task[None] | None = None

    def source(self, stream: ChangeStream) -> RedisSource:
        """The hub's source; the contender reads `stream` while it holds the lease."""
        self.reader = ElectedReader(
            stream,
            self.lease,
            self.changes,
            self.poll,
            leading=_leading,
            appended=STREAM_APPENDED.inc,
        )
        return _Source(self)

    async def start(self, _session: Session) -> None:
        """Starts contending for the lease (when there is a hub to feed)."""
        if self.reader is not None and self._task is None:
            self._task = asyncio.create_task(self.reader.run(), name="keygraph-elected-reader")

    async def stop(self) -> None:
        """Stops contending; a holder checkpoints and releases the lease."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def close(self) -> None:
        """Stops contending, and closes the link to Redis."""
        await self.stop()
        await self.link.close()


class _Source(RedisSource):
    """The Redis Stream of changes; closing it stops the contender first, before the hub
    closes the change stream the contender reads."""

    def __init__(self, elected: Elected) -> None:
        super().__init__(elected.changes, elected.url, replayed=lambda at: RESUMES_BY(at).inc())
        self.elected = elected

    async def close(self) -> None:
        await self.elected.stop()
        await super().close()


def _leading(held: bool) -> None:
    STREAM_READER.set(1 if held else 0)
    if held:
        STREAM_READER_TAKES.inc()

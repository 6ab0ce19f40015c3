"""A worker's hub fed from Redis, with KEYGRAPH_REDIS_URL: its source is the Redis Stream
of changes (keygraph/shared/source.py), and the worker contends for the lease that elects
the one reader of the change stream for every host (keygraph/realtime/reader.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid

from generated.table import TABLE
from keygraph.realtime.lease import Lease
from keygraph.realtime.reader import ElectedReader
from keygraph.serve.metrics import (
    RESUMES_BY,
    STREAM_APPENDED,
    STREAM_READER,
    STREAM_READER_TAKES,
)
from keygraph.shared.changes import ChangeLog
from keygraph.shared.link import Link, key_prefix
from keygraph.shared.source import RedisSource
from keygraph.store import Store
from keygraph.streams import ChangeStream
from server.settings import Settings

LEASE_PARTITION = "~KEYGRAPH#READER"
"""The lease's partition: no key template's literal text holds `~`, so no item of the
spec lies there (keygraph/serve/idempotency.py keeps its records the same way)."""


class Elected:
    """The worker's Redis source and its contender for the reader's lease."""

    def __init__(self, settings: Settings, store: Store, stream: ChangeStream, link: Link) -> None:
        assert settings.redis_url is not None
        prefix = key_prefix(settings.table)
        changes = ChangeLog(
            link,
            f"{prefix}changes",
            settings.redis_stream_retention,
            settings.redis_stream_max,
            TABLE.partition_key,
        )
        self.source = RedisSource(
            changes, settings.redis_url, replayed=lambda where: RESUMES_BY(where).inc()
        )
        key = {TABLE.partition_key: LEASE_PARTITION, TABLE.sort_key: settings.table}
        holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.reader = ElectedReader(
            stream,
            Lease(store, key, settings.reader_lease, holder),
            changes,
            settings.poll_interval,
            leading=self._leading,
            appended=STREAM_APPENDED.inc,
        )
        self._task: asyncio.Task[None] | None = None

    @staticmethod
    def _leading(held: bool) -> None:
        STREAM_READER.set(1 if held else 0)
        if held:
            STREAM_READER_TAKES.inc()

    def start(self) -> None:
        self._task = asyncio.create_task(self.reader.run(), name="keygraph-elected-reader")

    async def stop(self) -> None:
        """Stops contending; a holder checkpoints and releases the lease."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

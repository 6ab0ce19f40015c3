"""The one reader of a host's change stream under `serve --workers N`: a relay in the
supervisor that answers its workers' `shards()`, `read()` and `skip()` over a Unix domain
socket.

Every shard's recent records stay in memory (up to `keep` a shard): a worker reading at or
after the oldest of them is answered from memory, and the relay reads the store's stream
on its behalf at most once per `min_interval` a shard, however many workers ask. A position
older than what memory holds (a resume) is read from the store's stream. Messages are JSON
lines; records carry their images in DynamoDB's wire format, which keeps numbers, bytes and
sets exact.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keygraph.errors import StoreError
from keygraph.streams import (
    Batch,
    ChangeStream,
    Partitions,
    Position,
    Shard,
    Skipping,
    StreamRecord,
    Trimmed,
)
from keygraph.streams.wire import record_to_wire

log = logging.getLogger("keygraph.realtime")

KEEP = 4096
"""Records kept in memory a shard."""
READ_LIMIT = 1000


@dataclass
class _Kept:
    """A shard's records held in memory: contiguous after `base` (None: from the shard's
    oldest), read from the store up to `tail`."""

    base: str | None
    tail: Position
    ended: bool
    records: list[StreamRecord] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    """Each record's sequence to its number; `first` is the number of records[0]."""
    first: int = 0
    read_at: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def holds(self, after: str | None) -> bool:
        return after == self.base or (after is not None and after in self.index)

    def at_tail(self, after: str | None) -> bool:
        last = self.records[-1].sequence if self.records else self.base
        return after == last

    def add(self, records: list[StreamRecord], keep: int) -> None:
        for record in records:
            self.index[record.sequence] = self.first + len(self.records)
            self.records.append(record)
        if len(self.records) > 2 * keep:  # drop in chunks: one copy per `keep` records
            dropped, self.records = self.records[:-keep], self.records[-keep:]
            for record in dropped:
                del self.index[record.sequence]
            self.first += len(dropped)
            self.base = dropped[-1].sequence

    def answer(self, position: Position, limit: int) -> Batch:
        after = position.after
        start = 0 if after is None or after == self.base else self.index[after] - self.first + 1
        records = self.records[start : start + limit]
        rest = len(self.records) - start - len(records)
        last = records[-1].sequence if records else position.after
        return Batch(records, Position(position.shard_id, last), self.ended and rest == 0)


def _read_at(batch: Batch, limit: int) -> float:
    """When a shard's tail counts as read: now, or never when the batch was full (more may
    follow at once)."""
    return time.monotonic() if len(batch.records) < limit else 0.0


class StreamRelay:
    """Serves `stream` to the workers connecting at `path`."""

    def __init__(
        self, stream: ChangeStream, path: Path, min_interval: float, keep: int = KEEP
    ) -> None:
        self.stream = stream
        self.path = path
        self.min_interval = min_interval
        self.keep = keep
        self.reads = 0
        """Reads of the store's stream (shards() and read()) since start."""
        self._kept: dict[str, _Kept] = {}
        self._shards: list[Shard] = []
        self._shards_at = 0.0
        self._shards_lock = asyncio.Lock()
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.path))
        self.path.chmod(0o600)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                writer.write(json.dumps(await self._answer(json.loads(line))).encode() + b"\n")
                await writer.drain()
        except (OSError, ValueError, KeyError, TypeError) as exc:  # a broken request
            log.warning("a worker's relay connection failed: %r", exc)
        finally:
            writer.close()

    async def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            if request["op"] == "shards":
                shards = await self.shards()
                return {"shards": [[s.shard_id, s.parent_id, s.closed] for s in shards]}
            position = Position(request["shard"], request["after"])
            if request["op"] == "skip":
                batch = await self.skip(position)
            else:
                within = request.get("within")
                if within is not None:
                    within = Partitions(str(within["attribute"]), tuple(map(str, within["keys"])))
                batch = await self.read(position, int(request["limit"]), within=within)
        except Trimmed as exc:
            return {"error": "trimmed", "message": str(exc)}
        except (StoreError, OSError) as exc:
            return {"error": "store", "message": str(exc)}
        return {
            "records": [record_to_wire(r) for r in batch.records],
            "after": batch.next.after,
            "ended": batch.ended,
            "skipped": batch.skipped,
        }

    async def shards(self) -> list[Shard]:
        async with self._shards_lock:
            if time.monotonic() - self._shards_at >= self.min_interval:
                self.reads += 1
                self._shards = await self.stream.shards()
                self._shards_at = time.monotonic()
                kept = {s.shard_id for s in self._shards}
                for gone in [s for s in self._kept if s not in kept]:
                    del self._kept[gone]
            return self._shards

    async def read(
        self, position: Position, limit: int = READ_LIMIT, *, within: Partitions | None = None
    ) -> Batch:
        kept = self._kept.get(position.shard_id)
        if kept is None or not kept.holds(position.after):
            self.reads += 1
            if within is not None:  # a resume's read: the store skips other partitions
                return await self.stream.read(position, limit, within=within)
            batch = await self.stream.read(position, limit)
            if kept is None:
                kept = _Kept(position.after, batch.next, batch.ended)
                kept.read_at = _read_at(batch, limit)
                kept.add(batch.records, self.keep)
                self._kept[position.shard_id] = kept
            return batch
        if kept.at_tail(position.after):
            await self._refresh(kept)
        batch = kept.answer(position, limit)
        if within is None:
            return batch
        records = within.kept(batch.records)
        return Batch(records, batch.next, batch.ended, len(batch.records) - len(records))

    async def skip(self, position: Position) -> Batch:
        """Past the shard's records now: skipped by the store's stream where it can
        (Skipping), else read (a worker going to the stream's end keeps none of them)."""
        if not isinstance(self.stream, Skipping):
            return await self.read(position)
        self.reads += 1
        return await self.stream.skip(position)

    async def _refresh(self, kept: _Kept) -> None:
        """Reads the shard on from where memory ends, unless that was done just now."""
        async with kept.lock:
            if kept.ended or time.monotonic() - kept.read_at < self.min_interval:
                return
            self.reads += 1
            batch = await self.stream.read(kept.tail, READ_LIMIT)
            kept.read_at = _read_at(batch, READ_LIMIT)
            kept.add(batch.records, self.keep)
            kept.tail, kept.ended = batch.next, batch.ended

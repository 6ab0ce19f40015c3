"""The table's changes in a Redis Stream: appended by the one elected reader
(keygraph/realtime/reader.py), read by every host's hub (source.py). An entry is one
record with its shard, its sequence, its partition key's value and the reader's frontier
when it read it, so a hub hands on the changes the change stream would, cursors and all.
It also holds the sequence the reader had appended up to on its shard just before it (the
previous record of its read, or the frontier's), which tells a resume where to start.

An append is fenced: it carries the reader's term (its lease's version when taken), and
Redis refuses it once a later term has appended. Entries older than the retention, and the
oldest past the most kept, are trimmed as new ones come (MINID and MAXLEN, approximate)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from keygraph.realtime.shards import Read
from keygraph.streams import StreamRecord
from keygraph.streams.wire import record_of_wire, record_to_wire

if TYPE_CHECKING:
    from .link import Link

APPEND = """
local fence = tonumber(redis.call('GET', KEYS[2]) or '0')
local term = tonumber(ARGV[1])
if term < fence then
  return 0
end
if term > fence then
  redis.call('SET', KEYS[2], ARGV[1])
end
local i = 4
while i <= #ARGV do
  local shard, frontier, count = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  i = i + 3
  for _ = 1, count do
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 's', shard, 'f', frontier,
      'q', ARGV[i], 'b', ARGV[i + 1], 'p', ARGV[i + 2], 'r', ARGV[i + 3])
    i = i + 4
  end
end
local clock = redis.call('TIME')
local oldest = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000) - ARGV[2]
redis.call('XTRIM', KEYS[1], 'MINID', '~', string.format('%d', oldest))
return 1
"""
"""Appends to the stream KEYS[1] unless a later term than ARGV[1] holds the fence KEYS[2];
then trims entries older than ARGV[2] ms and past ARGV[3]. Each read is its shard, its
frontier and its count of records, each record its sequence, the sequence before it on its
shard ("": none), partition and wire JSON."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One record in the Redis Stream."""

    id: str
    shard_id: str
    frontier: dict[str, str | None]
    sequence: str
    before: str | None
    """The sequence the reader had appended up to on this shard before this record (None:
    none)."""
    partition: str
    wire: bytes

    @property
    def ms(self) -> int:
        """When Redis added it (the milliseconds of its id)."""
        return id_order(self.id)[0]

    def record(self) -> StreamRecord:
        return record_of_wire(orjson.loads(self.wire))

    def reached(self) -> dict[str, str | None]:
        """The reader's frontier just before this record: its read's, with this record's
        shard at the record before it (a read's records share one frontier)."""
        return {**self.frontier, self.shard_id: self.before}


def entries_of(raw: Sequence[tuple[Any, dict[bytes, bytes]]]) -> list[Entry]:
    """Entries as XRANGE and XREAD give them."""
    return [
        Entry(
            entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id),
            fields[b"s"].decode(),
            orjson.loads(fields[b"f"]),
            fields[b"q"].decode(),
            fields[b"b"].decode() or None,
            fields[b"p"].decode(),
            fields[b"r"],
        )
        for entry_id, fields in raw
    ]


class ChangeLog:
    """The Redis Stream `key` over `link`, keeping `retention` seconds and at most `most`
    entries; records name their partition by the table's `partition_key`."""

    def __init__(
        self, link: Link, key: str, retention: float, most: int, partition_key: str
    ) -> None:
        self.link = link
        self.key = key
        self.fence = f"{key}:fence"
        self.retention_ms = int(retention * 1000)
        self.most = most
        self.partition_key = partition_key
        self._append = link.script(APPEND)

    async def append(self, term: int, reads: list[Read]) -> bool:
        """Appends the records of `reads` as reader `term`; False when a later term has
        appended (this reader is fenced off). Raises the link's errors."""
        args: list[str | int | bytes] = [term, self.retention_ms, self.most]
        for read in reads:
            args += [read.shard_id, orjson.dumps(read.frontier), len(read.records)]
            before = read.frontier.get(read.shard_id)
            for record in read.records:
                partition = record.keys.get(self.partition_key)
                wire = orjson.dumps(record_to_wire(record))
                args += [record.sequence, before or "", str(partition), wire]
                before = record.sequence
        done = await self._append(keys=[self.key, self.fence], args=args)
        return int(done) == 1

    async def last_id(self) -> str:
        """The id of the newest entry; "0-0" when there is none."""
        newest = entries_of(await self.link.client.xrevrange(self.key, count=1))
        return newest[0].id if newest else "0-0"

    async def first_from(self, start: str | int = "-") -> Entry | None:
        """The oldest entry at or after id (or milliseconds) `start`."""
        found = entries_of(await self.link.client.xrange(self.key, min=start, count=1))
        return found[0] if found else None

    async def after(self, start: str, count: int) -> tuple[list[Entry], str | None]:
        """Up to `count` entries from `start` (an id; "(" and an id: after it), and the id
        of the oldest entry kept (None: the stream is empty), which tells whether entries
        were trimmed under the one reading."""
        async with self.link.client.pipeline(transaction=False) as pipe:
            pipe.xrange(self.key, min="-", count=1)
            pipe.xrange(self.key, min=start, count=count)
            oldest, found = await pipe.execute()
        kept = entries_of(oldest)
        return entries_of(found), kept[0].id if kept else None


def id_order(entry_id: str) -> tuple[int, int]:
    """An entry id as what orders it."""
    ms, _, number = entry_id.partition("-")
    return int(ms), int(number or 0)

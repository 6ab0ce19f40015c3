"""The change stream's records, shards and positions, and what a stream of them answers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from keygraph.errors import StoreError
from keygraph.keycodec import DELIMITER
from keygraph.plan import Item

RETENTION_SECONDS = 24 * 3600
"""How long a record stays readable, as on DynamoDB Streams."""


@dataclass(frozen=True, slots=True)
class StreamRecord:
    """One item-level change: its keys, its images before and after (None where there is no
    item: `old` of an INSERT, `new` of a REMOVE), as decoded items like a store's reads."""

    sequence: str
    """Orders the records of one shard: decimal digits, compared as integers."""
    event: Literal["INSERT", "MODIFY", "REMOVE"]
    keys: Item
    old: Item | None
    new: Item | None
    at: datetime
    """When the change was made (approximate on DynamoDB, to the second)."""


@dataclass(frozen=True, slots=True)
class Shard:
    """A shard of the stream: `parent_id` the shard it follows, `closed` when no record will
    be added to it (its children continue it)."""

    shard_id: str
    parent_id: str | None
    closed: bool


@dataclass(frozen=True, slots=True)
class Position:
    """A place to read from: after the record `after` of the shard, or from the shard's
    oldest record kept when `after` is None."""

    shard_id: str
    after: str | None = None


@dataclass(frozen=True, slots=True)
class Partitions:
    """Which items' records a read keeps: those whose partition key (the attribute
    `attribute`) is one of `keys` or lies below one (it, then the key delimiter), as every
    item of a tenant lies below its tenant's prefix."""

    attribute: str
    keys: tuple[str, ...]

    def holds(self, partition_key: object) -> bool:
        if not isinstance(partition_key, str):
            return False
        return any(
            partition_key == key or partition_key.startswith(key + DELIMITER) for key in self.keys
        )

    def kept(self, records: list[StreamRecord]) -> list[StreamRecord]:
        """The records of `records` within these partitions."""
        return [record for record in records if self.holds(record.keys.get(self.attribute))]


@dataclass(frozen=True, slots=True)
class Batch:
    """What one read found: the records, where to read next, and whether the shard has
    ended (closed and read to its end: go on with its children). A read kept to some
    partitions counts in `skipped` the records it decoded and left out; `next` is past
    them too."""

    records: list[StreamRecord]
    next: Position
    ended: bool
    skipped: int = 0


class NoStream(StoreError):
    """The store's table has no change stream to read."""


class Trimmed(StoreError):
    """A position older than the retention: its records are gone."""


class ChangeStream(Protocol):
    """The change stream of one store's table."""

    async def shards(self) -> list[Shard]:
        """Every shard kept, parents before their children."""
        ...

    async def read(
        self, position: Position, limit: int = 1000, *, within: Partitions | None = None
    ) -> Batch:
        """Up to `limit` records from `position`, in sequence order, only those `within`
        the partitions when given; raises Trimmed for a position past the retention. A read
        that finds no record and stays at `position` has reached the shard's end for now."""
        ...


@runtime_checkable
class Waking(Protocol):
    """A change stream told when records may have been added (the embedded store's change
    log, by writes to its file): its reader waits on it between polls instead of sleeping."""

    async def wait_for_writes(self, seconds: float) -> None:
        """Returns once records may have been added since the last wait returned, or after
        `seconds`."""
        ...


@runtime_checkable
class Skipping(Protocol):
    """A change stream that finds a shard's end without reading its records (the embedded
    store's change log): a reader goes to the stream's end at the cost of a read per shard,
    however many records lie before it."""

    async def skip(self, position: Position) -> Batch:
        """What a read of everything the shard holds after `position` now leaves: no
        records, the position past them, and whether the shard has ended."""
        ...

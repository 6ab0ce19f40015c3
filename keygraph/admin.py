"""The control plane of a table, as DynamoDB's UpdateTable and friends offer it: describe the
live table, create it, add or remove one global secondary index at a time (waiting until it
is active), and set its TTL attribute, point-in-time recovery and change stream. Both stores
implement it; table migrations (`keygraph.migrate`) speak only this and the data-plane Store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from .plan import IndexDef, StreamView

IndexStatus = Literal["CREATING", "ACTIVE", "DELETING", "UPDATING"]


@dataclass(frozen=True, slots=True)
class LiveIndex:
    index: IndexDef
    status: IndexStatus = "ACTIVE"


@dataclass(frozen=True, slots=True)
class LiveTable:
    """A table as it stands: its key attributes, indexes, TTL, backup and stream settings."""

    name: str
    partition_key: str
    sort_key: str | None
    indexes: dict[str, LiveIndex]
    ttl_attribute: str | None
    point_in_time_recovery: bool | None
    """None where the store has no such thing (the embedded store: copy its file)."""
    stream: StreamView | None
    """What the table's change stream holds; None when it has none."""


class TableAdmin(Protocol):
    """Table administration; every call returns once the change is in effect."""

    def describe(self) -> LiveTable | None:
        """The live table; None when it does not exist."""
        ...

    def create_table(self) -> None:
        """The table as its definition says, with every index, TTL and backups."""
        ...

    def create_index(self, index: IndexDef) -> None:
        """Add a GSI; an index added to a table holding items indexes every item that carries
        its key attributes. Returns once the index is ACTIVE."""
        ...

    def delete_index(self, name: str) -> None: ...

    def set_ttl(self, attribute: str | None) -> None: ...

    def set_point_in_time_recovery(self, enabled: bool) -> None: ...

    def set_stream(self, view: StreamView | None) -> None:
        """Turn the change stream on with `view` (off when None); a stream that is on with
        another view is turned off first, as DynamoDB requires."""
        ...

    def count(self, partition_prefix: str | None = None) -> int | None:
        """How many items the table holds (those whose partition key starts with the prefix),
        as far as the store can tell cheaply; None when it cannot."""
        ...

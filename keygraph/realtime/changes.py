"""A change as subscribers see it, and how a stream record becomes one: the API decides
(`Decode`), naming the topics it is published on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from keygraph.streams import StreamRecord

Kind = Literal["CREATED", "UPDATED", "DELETED"]
KINDS: dict[str, Kind] = {"INSERT": "CREATED", "MODIFY": "UPDATED", "REMOVE": "DELETED"}
"""A record's event as the kind of change it makes."""

Topic = tuple[str, str]
"""What a subscription listens on within its tenant: (what, which), as its API names them."""


@dataclass(frozen=True, slots=True)
class Change:
    """One item's change as subscribers see it: `model` the item after the change (before
    it, for a delete), `shard_id` and `sequence` where it sits in the stream, `frontier` the
    reader's over every shard when it read it (this shard's before it: frontier.py), and
    the `topics` it is published on. `shared` holds the payloads its subscribers resolve, by
    what else a payload depends on."""

    tenant: str
    entity: str
    kind: Kind
    model: Any
    shard_id: str
    sequence: str
    frontier: Mapping[str, str | None] = field(default_factory=dict)
    topics: tuple[Topic, ...] = ()
    shared: dict[bytes, asyncio.Future[tuple[bytes, int] | None]] = field(
        default_factory=dict, compare=False, repr=False
    )


Decode = Callable[[StreamRecord, str, Mapping[str, str | None]], Change | None]
"""The change a record makes, read on a shard with the reader's frontier; None for a record
no subscription is about."""

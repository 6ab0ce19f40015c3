"""A change as subscribers see it, and how a stream record becomes one: the API decides
(`Decode`), naming the topics it is published on."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from keygraph.entity import EntityDef
from keygraph.errors import BadArgument
from keygraph.plan import Item
from keygraph.streams import StreamRecord

log = logging.getLogger("keygraph.realtime")

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
    the `topics` it is published on, and the record's `images` (new, then old) for what a
    subscription asks of its keys. `shared` holds the payloads its subscribers resolve, by
    what else a payload depends on."""

    tenant: str
    entity: str
    kind: Kind
    model: Any
    shard_id: str
    sequence: str
    frontier: Mapping[str, str | None] = field(default_factory=dict)
    topics: tuple[Topic, ...] = ()
    images: tuple[Item, ...] = ()
    shared: dict[bytes, asyncio.Future[tuple[bytes, int] | None]] = field(
        default_factory=dict, compare=False, repr=False
    )


Decode = Callable[[StreamRecord, str, Mapping[str, str | None]], Change | None]
"""The change a record makes, read on a shard with the reader's frontier; None for a record
no subscription is about."""


Topics = Callable[[str, Any, StreamRecord], tuple[Topic, ...]]
"""The topics a changed item is published on, from its type, its model and its record
(none: no subscription is about it)."""


def change_of(
    record: StreamRecord,
    shard_id: str,
    frontier: Mapping[str, str | None],
    entities: Mapping[str, EntityDef],
    topics: Topics,
) -> Change | None:
    """The change a record makes to a tenant's item of `entities`, published on its
    `topics`; None for an item no subscription is about (another entity, an item without
    tenant, an image the spec does not read, no topic)."""
    image = record.new if record.new is not None else record.old
    if image is None:
        return None
    entity_type = image.get("_type")
    entity = entities.get(entity_type) if isinstance(entity_type, str) else None
    if entity is None or not entity.tenant_scoped:
        return None
    try:
        tenant = entity.tenant_of(record.keys)
        model = entity.read(image)
    except (BadArgument, ValueError) as exc:
        log.warning("stream record %s not decoded: %s", record.sequence, exc)
        return None
    published = topics(str(entity_type), model, record)
    if tenant is None or not published:
        return None
    kind = KINDS[record.event]
    images = tuple(image for image in (record.new, record.old) if image is not None)
    return Change(
        tenant,
        str(entity_type),
        kind,
        model,
        shard_id,
        record.sequence,
        frontier,
        published,
        images,
    )

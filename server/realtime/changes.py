"""What a change stream record means to subscribers: its tenant, the entity changed (by the
item's `_type`), the model before and after, and the topics it is published on."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from generated.entities import ENTITIES, TENANT_PREFIXES
from generated.table import TABLE
from keygraph.errors import BadArgument
from keygraph.keycodec import escape
from keygraph.streams import Partitions, StreamRecord

log = logging.getLogger("keygraph.realtime")

Kind = Literal["CREATED", "UPDATED", "DELETED"]
_KINDS: dict[str, Kind] = {"INSERT": "CREATED", "MODIFY": "UPDATED", "REMOVE": "DELETED"}

Topic = tuple[str, str]
"""(entity, id) a subscription listens on: ("order", user id), ("user", user id),
("group", group id), ("org", a node's path joined by ".")."""

ORG_PATH_SEPARATOR = "."


@dataclass(frozen=True, slots=True)
class Change:
    """One item's change as subscribers see it: `model` the item after the change (before
    it, for a delete), `shard_id` and `sequence` where it sits in the stream, `frontier` the
    reader's over every shard when it read it (this shard's before it: frontier.py).
    `shared` holds the payloads its subscribers resolve, by what else a payload depends on
    (events.py)."""

    tenant: str
    entity: str
    kind: Kind
    model: Any
    shard_id: str
    sequence: str
    frontier: Mapping[str, str | None] = field(default_factory=dict)
    shared: dict[bytes, asyncio.Future[tuple[bytes, int] | None]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def topics(self) -> list[Topic]:
        return topics_of(self.entity, self.model)


def change_of(
    record: StreamRecord, shard_id: str, frontier: Mapping[str, str | None] | None = None
) -> Change | None:
    """The change a record makes, or None for an item no subscription is about (another
    entity, an item without tenant, an image the spec does not read)."""
    image = record.new if record.new is not None else record.old
    if image is None:
        return None
    entity_type = image.get("_type")
    entity = ENTITIES.get(entity_type) if isinstance(entity_type, str) else None
    if entity is None or entity_type not in _PUBLISHED or not entity.tenant_scoped:
        return None
    try:
        tenant = entity.tenant_of(record.keys)
        model = entity.read(image)
    except (BadArgument, ValueError) as exc:
        log.warning("stream record %s not decoded: %s", record.sequence, exc)
        return None
    if tenant is None:
        return None
    return Change(
        tenant, entity_type, _KINDS[record.event], model, shard_id, record.sequence, frontier or {}
    )


_PUBLISHED = frozenset({"ORDER", "USER", "MEMBER", "ORG_NODE"})


def tenant_partitions(tenant: str) -> Partitions:
    """Where a tenant's items lie in the table: a replay reads only those."""
    heads = tuple(head + escape(tenant) for head in TENANT_PREFIXES)
    return Partitions(TABLE.partition_key, heads)


def topics_of(entity: str, model: Any) -> list[Topic]:
    """The topics a changed model is published on: an org node's on its own path and on
    every ancestor's, so a subscription to a node sees its whole subtree."""
    if entity == "ORDER":
        return [("order", model.user_id)]
    if entity == "USER":
        return [("user", model.user_id)]
    if entity == "MEMBER":
        return [("group", model.group_id)]
    if entity == "ORG_NODE":
        path = list(model.path)
        return [("org", ORG_PATH_SEPARATOR.join(path[:end])) for end in range(1, len(path) + 1)]
    return []

"""What a change stream record means to this API's subscribers: its tenant, the entity
changed (by the item's `_type`), the model, and the topics it is published on: ("order",
user id), ("user", user id), ("group", group id), ("org", a node's path joined by ".")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generated.entities import ENTITIES, TENANT_PREFIXES
from generated.table import TABLE
from keygraph.keycodec import escape
from keygraph.realtime.changes import Change, Topic
from keygraph.realtime.changes import change_of as decoded
from keygraph.streams import Partitions, StreamRecord

ORG_PATH_SEPARATOR = "."


def change_of(
    record: StreamRecord, shard_id: str, frontier: Mapping[str, str | None] | None = None
) -> Change | None:
    """The change a record makes, or None for an item no subscription is about (another
    entity, an item without tenant, an image the spec does not read)."""
    return decoded(record, shard_id, frontier or {}, ENTITIES, _topics)


def _topics(entity: str, model: Any, _record: StreamRecord) -> tuple[Topic, ...]:
    return tuple(topics_of(entity, model)) if entity in _PUBLISHED else ()


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

"""Stream records read as entity models: what a generated package's `decode_change` does
with its entities (usable anywhere a record is at hand, not only in the server)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from keygraph.entity import EntityDef
from keygraph.plan import Item

from .records import StreamRecord

M = TypeVar("M")


@dataclass(frozen=True, slots=True)
class Change(Generic[M]):
    """One item's change as models: `old` before it, `new` after (None where the item did
    not exist, or the stream's view leaves that image out)."""

    event: Literal["INSERT", "MODIFY", "REMOVE"]
    entity: str
    """The name of the entity whose model the images are (the newer image's)."""
    keys: Item
    old: M | None
    new: M | None
    sequence: str
    at: datetime


def decode(record: StreamRecord, entities: Mapping[str, EntityDef]) -> Change[Any] | None:
    """The record's images as the models of their entities, by `_type`; None when no image
    is of an entity of `entities` (an item of another spec, or a KEYS_ONLY record). Raises
    what a model refuses for an image it cannot read."""
    found = [
        (entities.get(str(image.get("_type"))), image)
        for image in (record.new, record.old)
        if image is not None
    ]
    named = [entity for entity, _ in found if entity is not None]
    if not named:
        return None
    return Change(
        event=record.event,
        entity=named[0].name,
        keys=record.keys,
        old=_model(entities, record.old),
        new=_model(entities, record.new),
        sequence=record.sequence,
        at=record.at,
    )


def _model(entities: Mapping[str, EntityDef], image: Item | None) -> Any:
    entity = None if image is None else entities.get(str(image.get("_type")))
    return None if entity is None or image is None else entity.read(image)

"""A list answered in parts by a run (stream.py): its values, the items completed so far,
and its part, to which completed items are serialized a part at a time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from graphql.pyutils import Path

from server.graphql.compiled.plan import FieldPlan, ListOf
from server.graphql.compiled.waves import Place
from server.graphql.stream import Part


@dataclass(eq=False, slots=True)
class PartedList:
    """A list answered in parts: its values, its items so far and its serialized part."""

    completion: ListOf
    field: FieldPlan
    values: list[Any]
    path: Path
    place: Place
    part: Part
    placeholder: orjson.Fragment
    items: list[Any]
    budget: int
    """The objects a part may hold, about."""
    next: int = 0
    """The items completed."""
    done: int = 0
    """The items serialized (and freed: None in `items`)."""
    size: int = 1
    """Items the next part completes: as many as hold about `budget` objects."""

    def flush(self) -> None:
        """Serializes the items completed since the last flush, and sizes the next part."""
        part = self.part
        before = part.objects
        for index in range(self.done, self.next):
            part.add(self.items[index])
            self.items[index] = None
        flushed, objects = self.next - self.done, part.objects - before
        self.done = self.next
        if flushed:
            self.size = max(1, self.budget * flushed // objects) if objects else flushed * 2

"""A list answered in parts by a run: its values, the items completed so far, and its part,
to which completed items are serialized a part at a time. The parts and the stream that
makes them are the caller's (the context's `stream`), as these protocols say."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
from graphql.pyutils import Path

from .plan import FieldPlan, ListOf
from .waves import Place


class Shape(Protocol):
    """What a part's list holds: the most objects one of its items can."""

    @property
    def item_cost(self) -> int: ...


class Part(Protocol):
    """One list answered in parts: its items serialized, and the objects they hold."""

    @property
    def shape(self) -> Shape: ...

    @property
    def objects(self) -> int: ...

    def add(self, item: Any) -> None: ...


class Stream(Protocol):
    """A response answered in parts: a new part per list, and the objects a part may hold."""

    @property
    def part_objects(self) -> int: ...

    def part(
        self, path: list[str | int], alive: Callable[[], bool]
    ) -> tuple[Part, orjson.Fragment]: ...


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

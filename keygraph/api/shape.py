"""Where an answer's counted objects sit, known before it runs (its cost's walk gives it),
so that the objects an answer holds are counted without its types: what a request gives
back to its tenant's budget (keygraph/serve/cost_report.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Shape:
    """What an answer holds under one key: whether its objects count, and its fields."""

    counts: bool = False
    fields: dict[str, Shape] = field(default_factory=dict)
    item_cost: int = 0
    """For a list, the most objects one of its items can hold (0: none, or not a list)."""

    def merge(self, other: Shape) -> None:
        self.counts = self.counts or other.counts
        self.item_cost = max(self.item_cost, other.item_cost)
        for key, shape in other.fields.items():
            mine = self.fields.setdefault(key, Shape())
            mine.merge(shape)


@dataclass(frozen=True, slots=True)
class Estimate:
    """The most objects an operation's answer can hold, and where they sit."""

    cost: int
    shape: Shape


def count_objects(data: Any, shape: Shape) -> int:
    """The counted objects an answer's data holds, by its shape: an object, or each of a
    list's in one loop. An object whose shape has no fields below is counted where it
    stands, without a call of its own."""
    if isinstance(data, dict):
        data = [data]
    elif not isinstance(data, list):
        return 0
    counts = 1 if shape.counts else 0
    fields = shape.fields.items()
    total = 0
    for entry in data:
        if isinstance(entry, dict):
            total += counts
            for key, inner in fields:
                value = entry.get(key)
                if value is None:
                    continue
                if not inner.fields and type(value) is dict:
                    total += inner.counts
                else:
                    total += count_objects(value, inner)
        elif entry is not None:
            total += count_objects(entry, shape)  # a list in a list
    return total

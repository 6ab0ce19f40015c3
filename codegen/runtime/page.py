"""A page of typed results with the cursor that continues it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    cursor: str | None
    """Continues after the last item; None when no item follows."""

    @property
    def has_next(self) -> bool:
        return self.cursor is not None

"""A page of typed results with the cursors that continue it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


def _no_cursor(index: int) -> str | None:
    return None


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    cursor: str | None
    """Continues after the last item; None when no item follows."""
    cursor_after: Callable[[int], str | None] = _no_cursor
    """The cursor that continues after items[i], made (and signed) only when asked for."""

    @property
    def has_next(self) -> bool:
        return self.cursor is not None

"""A page of typed results with the cursors that continue it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


def _no_cursor(index: int) -> str | None:
    return None


def _no_next_cursor() -> str | None:
    return None


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    has_next: bool
    """Whether an item follows the page."""
    cursor_after: Callable[[int], str | None] = _no_cursor
    """The cursor that continues after items[i], made (and signed) only when asked for."""
    next_cursor: Callable[[], str | None] = _no_next_cursor
    """The cursor that continues after the page, made (and signed) only when asked for."""

    @property
    def cursor(self) -> str | None:
        """Continues after the page (signed on each use); None when no item follows."""
        return self.next_cursor() if self.has_next else None

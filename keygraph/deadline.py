"""The deadline of the work in progress (a request's), for stores to keep their retries
inside: a context variable the server sets per request; background work has none."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from contextvars import ContextVar, Token
from typing import TypeVar

T = TypeVar("T")

_AT: ContextVar[float | None] = ContextVar("keygraph_deadline", default=None)


def set_at(at: float | None) -> Token[float | None]:
    """Work in this context must end by `at` (time.monotonic()); None: no deadline. The
    token resets it (`reset`)."""
    return _AT.set(at)


def reset(token: Token[float | None]) -> None:
    _AT.reset(token)


def remaining() -> float | None:
    """Seconds left before the deadline (negative once past it); None when there is none."""
    at = _AT.get()
    return None if at is None else at - time.monotonic()


async def unbounded(work: Awaitable[T]) -> T:
    """`work`, awaited with no deadline: for work a request starts that outlives it. Run it
    as a task of its own (the task's context is a copy: its caller's deadline stays)."""
    _AT.set(None)
    return await work

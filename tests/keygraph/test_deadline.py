"""keygraph.deadline: a request's deadline for the store, and work that outlives it."""

from __future__ import annotations

import asyncio
import time

from keygraph import deadline


async def test_work_outliving_its_request_has_no_deadline() -> None:
    async def left() -> float | None:
        return deadline.remaining()

    assert deadline.remaining() is None
    token = deadline.set_at(time.monotonic() - 1)  # a request past its deadline
    try:
        assert (deadline.remaining() or 0) < 0
        assert await asyncio.ensure_future(left()) is not None  # a task inherits it
        assert await asyncio.ensure_future(deadline.unbounded(left())) is None
        assert (deadline.remaining() or 0) < 0  # the request's own is kept
    finally:
        deadline.reset(token)
    assert deadline.remaining() is None

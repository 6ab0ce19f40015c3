"""Request timeouts on one timer per worker (server/edge/deadlines.py): work past its deadline
is cancelled and ends in TimeoutError, other cancellations pass through, and the sweep stops
once nothing runs, on whichever event loop runs next."""

from __future__ import annotations

import asyncio
import time

import pytest

from server.edge.deadlines import Deadlines


async def _run(deadlines: Deadlines, seconds: float) -> bool:
    """Sleeps `seconds` under a deadline; whether it expired."""
    deadline = deadlines.deadline()
    try:
        with deadline:
            await asyncio.sleep(seconds)
    except TimeoutError:
        assert deadline.expired()
        return True
    assert not deadline.expired()
    return False


async def test_work_past_its_deadline_ends_in_timeout_within_a_tick() -> None:
    deadlines = Deadlines(0.2)
    started = time.monotonic()
    assert await _run(deadlines, 5)
    assert 0.2 <= time.monotonic() - started < 0.2 + deadlines.tick + 0.1
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_work_in_time_ends_normally_and_the_sweep_stops() -> None:
    deadlines = Deadlines(0.2)
    assert await asyncio.gather(*(_run(deadlines, 0.01) for _ in range(3))) == [False] * 3
    assert deadlines._running == {}
    await asyncio.sleep(deadlines.tick * 2)
    assert deadlines._sweep is None


async def test_a_cancellation_from_elsewhere_stays_a_cancellation() -> None:
    deadlines = Deadlines(10)
    task = asyncio.ensure_future(_run(deadlines, 5))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert deadlines._running == {}


def test_deadlines_keep_working_on_the_next_event_loop() -> None:
    deadlines = Deadlines(0.1)
    assert not asyncio.run(_run(deadlines, 0))  # its loop closes with a sweep to come
    assert asyncio.run(_run(deadlines, 5))

"""Request deadlines on one timer per process (keygraph/serve/deadlines.py): work past its
deadline (the shared timeout, or one of its own) is cancelled and ends in TimeoutError,
other cancellations pass through, and the sweep stops once nothing runs, on whichever event
loop runs next."""

from __future__ import annotations

import asyncio

import pytest

from keygraph.serve import deadlines as deadlines_module
from keygraph.serve.deadlines import Deadlines
from tests.waiting import until


async def _run(deadlines: Deadlines, seconds: float, own: float | None = None) -> bool:
    """Sleeps `seconds` under a deadline (`own` seconds away, or the shared one);
    whether it expired."""
    deadline = deadlines.deadline(own)
    try:
        with deadline:
            await asyncio.sleep(seconds)
    except TimeoutError:
        assert deadline.expired()
        return True
    assert not deadline.expired()
    return False


class Clock:
    """The deadlines' clock (their module's `time`), moved on by the test: the sweeps run on
    the event loop's timer, what they compare against is this."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


async def _sweep(deadlines: Deadlines) -> None:
    """Waits for the next sweep to have run."""
    pending = deadlines._sweep
    assert pending is not None
    await until(lambda: deadlines._sweep is not pending, "the next sweep")


async def test_work_past_its_deadline_ends_in_timeout_at_the_next_sweep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr(deadlines_module, "time", clock)
    deadlines = Deadlines(0.2)
    work = asyncio.create_task(_run(deadlines, 60))
    await until(lambda: deadlines._running, "the work to start")
    clock.now += 0.19
    await _sweep(deadlines)
    assert len(deadlines._running) == 1  # not before its deadline
    clock.now += 0.02
    await _sweep(deadlines)
    assert deadlines._running == {}  # cancelled by the first sweep past it
    assert await work
    assert work.cancelling() == 0


async def test_a_deadline_of_its_own_cuts_at_its_own_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr(deadlines_module, "time", clock)
    deadlines = Deadlines(30)
    short = asyncio.create_task(_run(deadlines, 60, own=0.5))
    shared = asyncio.create_task(_run(deadlines, 60))
    await until(lambda: len(deadlines._running) == 2, "the work to start")
    clock.now += 0.51
    await _sweep(deadlines)
    assert await short
    assert not shared.done()
    assert [d.timeout for d in deadlines._running.values()] == [30]
    clock.now += 30
    assert await shared


async def test_work_in_time_ends_normally_and_the_sweep_stops() -> None:
    deadlines = Deadlines(0.2)
    assert await asyncio.gather(*(_run(deadlines, 0.01) for _ in range(3))) == [False] * 3
    assert deadlines._running == {}
    await until(lambda: deadlines._sweep is None, "the sweep to stop")


async def test_a_cancellation_from_elsewhere_stays_a_cancellation() -> None:
    deadlines = Deadlines(10)
    task = asyncio.ensure_future(_run(deadlines, 5))
    await until(lambda: deadlines._running, "the work to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert deadlines._running == {}


def test_deadlines_keep_working_on_the_next_event_loop() -> None:
    deadlines = Deadlines(0.1)
    assert not asyncio.run(_run(deadlines, 0))  # its loop closes with a sweep to come
    assert asyncio.run(_run(deadlines, 5))

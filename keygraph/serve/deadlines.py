"""Request deadlines on one timer per process (bounded.py's). Each request's task is noted with
its deadline, and a sweep a few times a second, while requests run, cancels those past it. A
request costs a dict entry rather than a timer of its own (asyncio.timeout schedules and
cancels a timer handle for each, a twentieth of a small request's time); a timeout fires up
to a tick late."""

from __future__ import annotations

import asyncio
import time
from contextvars import Token
from types import TracebackType

from keygraph import deadline as work_deadline


class Deadlines:
    """The running requests' deadlines, `timeout` seconds after each started."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.tick = min(0.05, timeout / 4)
        """Seconds between sweeps: a timeout fires at most this late."""
        self._running: dict[asyncio.Task[object], Deadline] = {}
        self._sweep: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def deadline(self, timeout: float | None = None) -> Deadline:
        """The deadline of the calling task's request, a context manager around its work:
        `timeout` seconds after it is entered (by default the one all share)."""
        return Deadline(self, self.timeout if timeout is None else timeout)

    def _start(self, deadline: Deadline) -> None:
        self._running[deadline.task] = deadline
        loop = asyncio.get_running_loop()
        if self._sweep is None or self._loop is not loop:
            self._loop = loop
            self._sweep = loop.call_later(self.tick, self._expire)

    def _end(self, deadline: Deadline) -> None:
        self._running.pop(deadline.task, None)

    def _expire(self) -> None:
        """Cancels the requests past their deadline; sweeps again while any runs."""
        now = time.monotonic()
        for deadline in list(self._running.values()):
            if deadline.at <= now:
                deadline.expire()
        self._sweep = None
        if self._running and self._loop is not None:
            self._sweep = self._loop.call_later(self.tick, self._expire)


class Deadline:
    """One request's deadline: its task is cancelled once past it, and the CancelledError
    that ends the block becomes TimeoutError, as with asyncio.timeout. Inside the block,
    keygraph.deadline holds it, for the store to keep its retries inside."""

    __slots__ = ("_cancelling", "_expired", "_noted", "at", "deadlines", "task", "timeout")

    def __init__(self, deadlines: Deadlines, timeout: float) -> None:
        self.deadlines = deadlines
        self.timeout = timeout
        self._expired = False

    def __enter__(self) -> Deadline:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a deadline is kept only inside a task")
        self.task = task
        self._cancelling = task.cancelling()
        self.at = time.monotonic() + self.timeout
        self.deadlines._start(self)
        self._noted: Token[float | None] = work_deadline.set_at(self.at)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.deadlines._end(self)
        work_deadline.reset(self._noted)
        if (
            self._expired
            and kind is asyncio.CancelledError
            and self.task.uncancel() <= self._cancelling
        ):
            raise TimeoutError from error

    def expire(self) -> None:
        self._expired = True
        self.deadlines._end(self)
        self.task.cancel()

    def expired(self) -> bool:
        """Whether the request ran past its deadline (and was cancelled for it)."""
        return self._expired

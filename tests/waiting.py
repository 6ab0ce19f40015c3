"""Waiting on a condition with a deadline, never for a fixed time: `wait_for` polls a
condition, `until` does so inside an event loop (letting it run between looks), `eventually`
awaits a condition that is itself awaited (a request, a read of the store), and `answering`
polls until a URL answers (a server that has just started)."""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import Awaitable, Callable

POLL = 0.01
"""Seconds between two looks at the condition."""


def wait_for(condition: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    """Returns once `condition()` is true; AssertionError naming `what` past the timeout."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(POLL)


UNTIL_SECONDS = 15.0


async def until(condition: Callable[[], object], what: str) -> None:
    """As `wait_for` (for UNTIL_SECONDS), letting the event loop run between two looks."""
    deadline = time.monotonic() + UNTIL_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(POLL)


async def eventually(
    condition: Callable[[], Awaitable[object]], what: str, seconds: float = UNTIL_SECONDS
) -> None:
    """As `until`, for a condition that must be awaited to be known."""
    deadline = time.monotonic() + seconds
    while not await condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(POLL)


def answering(url: str, alive: Callable[[], bool] = lambda: True, timeout: float = 60) -> None:
    """Returns once `url` answers; AssertionError when `alive()` turns false first (the
    server exited) or past the timeout."""

    def up() -> bool:
        assert alive(), f"the server of {url} exited"
        try:
            with urllib.request.urlopen(url, timeout=2):
                return True
        except OSError:
            return False

    wait_for(up, f"{url} to answer", timeout)

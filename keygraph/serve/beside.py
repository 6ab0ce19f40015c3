"""What an app runs beside its requests while it serves: the work its Served asks for at
start (the repository's pending cleanups, server/compiled.py), and the sweep of what
owners' deletes left (keygraph.writes.sweep), now and every SWEEP_EVERY seconds."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from keygraph.store import Session
from keygraph.writes import sweep

from .served import SWEEP_EVERY, Served

log = logging.getLogger("keygraph.serve")


@contextlib.asynccontextmanager
async def running_beside(served: Served) -> AsyncIterator[None]:
    """Runs Served.starting once, then sweeps until the block ends; a failure of either is
    logged, and serving goes on."""
    session = Session(served.store, served.cursors)
    for start in served.starting:
        try:
            await start(session)
        except Exception:
            log.warning("work at start failed; serving goes on", exc_info=True)
    sweeping = asyncio.create_task(_sweeping(served, session)) if served.sweeps else None
    try:
        yield
    finally:
        if sweeping is not None:
            sweeping.cancel()
            await asyncio.gather(sweeping, return_exceptions=True)


async def _sweeping(served: Served, session: Session) -> None:
    """Sweeps now and every SWEEP_EVERY seconds; a sweep that fails (the store unavailable)
    is logged and done again."""
    while True:
        try:
            await sweep(session, served.sweeps, SWEEP_EVERY)
        except Exception:
            log.warning("a sweep of owned items failed; the next one goes on", exc_info=True)
        await asyncio.sleep(SWEEP_EVERY)

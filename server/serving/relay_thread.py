"""The supervisor's stream relay (server/serving/relay.py) on an asyncio loop of its own
thread, over its own store: the one process of the host that reads the change stream."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from keygraph.errors import StoreError
from keygraph.store import Store
from keygraph.stores import stream_of
from keygraph.streams import NoStream
from server.serving.relay import StreamRelay

log = logging.getLogger("keygraph.serve")

START_TIMEOUT = 60.0


@contextlib.contextmanager
def relaying(
    open_store: Callable[[], Store], path: Path, min_interval: float
) -> Iterator[Path | None]:
    """Runs a relay of the store's stream at `path` for the block; yields its path, or None
    when the store has no stream (the workers then serve no subscriptions)."""
    ready = threading.Event()
    started: list[Path | None] = []
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def run() -> None:
        try:
            await serve_relay()
        except (StoreError, OSError) as exc:
            log.warning("the change stream relay stopped: %s", exc)
        finally:
            ready.set()

    async def serve_relay() -> None:
        store = open_store()
        try:
            try:
                stream = stream_of(store)
            except NoStream:
                started.append(None)
                return
            relay = StreamRelay(stream, path, min_interval)
            await relay.start()
            started.append(path)
            ready.set()
            try:
                await stop.wait()
            finally:
                await relay.stop()
                close = getattr(stream, "close", None)
                if close is not None:
                    await close()
        finally:
            await store.close()

    thread = threading.Thread(
        target=loop.run_until_complete, args=(run(),), name="keygraph-stream-relay", daemon=True
    )
    thread.start()
    ready.wait(START_TIMEOUT)
    try:
        if started and started[0] is not None:
            log.info("relaying the change stream to the workers at %s", path)
        yield started[0] if started else None
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(START_TIMEOUT)
        loop.close()

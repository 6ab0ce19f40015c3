"""The embedded store's change log tells its reader of writes to its file as they happen:
a wait returns when another process writes, and only a write to the store's own files
wakes it."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import textwrap
import time
from pathlib import Path

import pytest

from keygraph.stores import stream_of
from keygraph.stores.embedded.changes import ChangeLog
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.streams import Waking
from testkit.stores import TEST_TABLE

STREAMED = dataclasses.replace(TEST_TABLE, stream="NEW_AND_OLD_IMAGES")
LONG = 60.0
"""A wait's timeout that no passing test reaches."""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify: Linux")

PUT = """
import asyncio, dataclasses, sys
from keygraph.plan import Put
from keygraph.stores.embedded.store import EmbeddedStore
from testkit.stores import TEST_TABLE

async def main(path):
    store = EmbeddedStore(dataclasses.replace(TEST_TABLE, stream="NEW_AND_OLD_IMAGES"), path=path)
    await store.put(Put({"PK": "p", "SK": "written"}))
    await store.close()

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture
def store(tmp_path: Path) -> EmbeddedStore:
    return EmbeddedStore(STREAMED, path=tmp_path / "t.sqlite3")


def _log(store: EmbeddedStore) -> ChangeLog:
    """The store's change log, which its reader waits on (Waking) between polls."""
    stream = stream_of(store)
    assert isinstance(stream, ChangeLog)
    assert isinstance(stream, Waking)
    return stream


async def _put_from_another_process(path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", textwrap.dedent(PUT), str(path)
    )
    assert await process.wait() == 0


async def test_a_wait_returns_when_another_process_writes(store: EmbeddedStore) -> None:
    stream = _log(store)
    try:
        await stream.wait_for_writes(0)  # watching from here on
        waiting = asyncio.create_task(stream.wait_for_writes(LONG))
        began = time.monotonic()
        await _put_from_another_process(store.path)
        async with asyncio.timeout(LONG / 2):
            await waiting
        assert time.monotonic() - began < LONG / 2
    finally:
        await stream.close()
        await store.close()


async def test_a_write_before_the_wait_returns_it_at_once(store: EmbeddedStore) -> None:
    stream = _log(store)
    try:
        await stream.wait_for_writes(0)  # watching from here on
        await _put_from_another_process(store.path)
        async with asyncio.timeout(LONG / 2):
            await stream.wait_for_writes(LONG)
    finally:
        await stream.close()
        await store.close()


async def test_another_file_beside_the_store_does_not_wake_it(store: EmbeddedStore) -> None:
    stream = _log(store)
    try:
        await stream.wait_for_writes(0)  # watching from here on
        (store.path.parent / "other.log").write_text("not the store's\n")
        began = time.monotonic()
        await stream.wait_for_writes(0.3)
        assert time.monotonic() - began >= 0.3
    finally:
        await stream.close()
        await store.close()

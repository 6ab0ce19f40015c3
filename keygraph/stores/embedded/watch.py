"""Writes to the embedded store's file, told as they happen (Linux's inotify), so a reader of
its change log wakes when any process writes instead of at its next poll. SQLite in WAL mode
appends a write's pages to the `-wal` file beside the database (and a checkpoint copies them
into it): a write to either is a change to read. Where inotify is not there, nothing is
told, and the reader polls."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import os
import struct
import sys
from pathlib import Path

_IN_MODIFY = 0x2
_EVENT = struct.Struct("iIII")
"""inotify_event: watch, mask, cookie and the length of the name that follows."""
_READ_BYTES = 64 * 1024


def _inotify(directory: Path) -> int | None:
    """A non-blocking inotify descriptor told of writes to files in `directory`; None off
    Linux or when it cannot be had (no descriptors or watches left)."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
    if fd < 0:
        return None
    if libc.inotify_add_watch(fd, os.fsencode(directory), _IN_MODIFY) < 0:
        os.close(fd)
        return None
    return fd


class FileWrites:
    """Writes to the SQLite file at `path` (its `-wal` file too), waited for on the running
    loop: inotify is asked at the first wait; off Linux, a wait runs to its end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        name = os.fsencode(path.name)
        self._names = {name, name + b"-wal"}
        self._fd: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._untold = False
        """Set once inotify could not be had: waits run to their ends."""
        self._written = False
        """A write was told since the last wait returned."""
        self._waiter: asyncio.Future[None] | None = None

    async def wait(self, seconds: float) -> None:
        """Returns once the file was written since the last wait returned, or after
        `seconds`."""
        if not self._watching():
            await asyncio.sleep(seconds)
            return
        if not self._written:
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = loop.call_later(seconds, _wake, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = None
        self._written = False

    def close(self) -> None:
        """Stops watching; a later wait watches again."""
        fd, loop = self._fd, self._loop
        self._fd = self._loop = None
        if fd is None:
            return
        if loop is not None and not loop.is_closed():
            loop.remove_reader(fd)
        os.close(fd)

    def _watching(self) -> bool:
        """Whether writes are told, watched on this loop from the first wait on."""
        if self._fd is None and not self._untold:
            fd = _inotify(self.path.parent)
            if fd is None:
                self._untold = True
                return False
            self._fd, self._loop = fd, asyncio.get_running_loop()
            self._loop.add_reader(fd, self._readable)
        return self._fd is not None

    def _readable(self) -> None:
        """Drains what inotify told; a write to the file ends the wait under way."""
        fd = self._fd
        assert fd is not None
        while True:
            try:
                data = os.read(fd, _READ_BYTES)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                size = _EVENT.unpack_from(data, offset)[3]
                offset += _EVENT.size
                if data[offset : offset + size].rstrip(b"\0") in self._names:
                    self._written = True
                offset += size
        if self._written and self._waiter is not None:
            _wake(self._waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)

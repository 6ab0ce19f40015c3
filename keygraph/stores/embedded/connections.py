"""The embedded store's SQLite connections: one per thread on one file (WAL), and write
transactions that take the write lock up front (BEGIN IMMEDIATE) and wait for it
(busy_timeout), so writers from threads or processes serialise cleanly."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from keygraph.errors import StoreUnavailable

from . import keyrange

_BUSY_TIMEOUT_MS = 10_000
_MMAP_BYTES = 1 << 30


class Connections:
    """The connections of every thread to the file at `path`, closed together."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._open: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def get(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        with self._lock:
            if self._closed:
                raise StoreUnavailable("the embedded store is closed")
            conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=_BUSY_TIMEOUT_MS / 1000,
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
            # Reads through a memory map skip a system call per page: large files stay fast.
            conn.execute(f"PRAGMA mmap_size={_MMAP_BYTES}")
            conn.create_function(
                keyrange.SEGMENT_FUNCTION, 2, keyrange.segment_of, deterministic=True
            )
            self._open.append(conn)
        self._local.conn = conn
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed when the block ends, rolled back when it raises."""
        conn = self.get()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise StoreUnavailable(f"the embedded store is busy: {exc}") from exc
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        """Close every thread's connection; later calls raise StoreUnavailable."""
        with self._lock:
            self._closed = True
            connections, self._open = self._open, []
        for conn in connections:
            conn.close()
        self._local = threading.local()

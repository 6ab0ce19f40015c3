"""The embedded store's change log: its table's stream, kept in the SQLite file itself.

Triggers on the items table write one record per item changed (a put, an update, a delete,
through any path and any process), inside the transaction that changes the item, so a write
rolled back leaves none. A put or update that changes nothing leaves none, as on DynamoDB.
Records are numbered by their rowid, which never goes back as the newest record is never
trimmed (files from before keep their AUTOINCREMENT sequence), and grouped into shards: a
write opens a child shard once the open one is `ROTATE_SECONDS` old, and the shard after it
closes it.
Opening a shard drops the shards whose records are all past the retention; a reader skips
(or, at a position inside them, refuses with Trimmed) the records past it that remain.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from keygraph.errors import ValidationError
from keygraph.keycodec import DELIMITER
from keygraph.plan import StreamView
from keygraph.streams import (
    RETENTION_SECONDS,
    Batch,
    Partitions,
    Position,
    Shard,
    StreamRecord,
    Trimmed,
)

from .values import item_of
from .watch import FileWrites

ROTATE_SECONDS = 4 * 3600
"""A shard's life before a write opens its child, as DynamoDB Streams rotates shards."""
READ_LIMIT = 1000
"""The most records one read returns, as GetRecords."""
SCAN_WINDOW = 5000
"""The most records one read kept to some partitions passes over, in SQL, without decoding
them: its time is bounded however many other partitions' records lie between."""
_SHARD_PREFIX = "shardId-"
_LAST = (1 << 63) - 1
_NOW = "((julianday('now') - 2440587.5) * 86400.0)"
"""Epoch seconds (to the millisecond) in SQL: a trigger runs in every process's connection,
so it cannot call a Python function."""

CREATE_TABLES = (
    "CREATE TABLE IF NOT EXISTS stream_shards (id INTEGER PRIMARY KEY, first_seq INTEGER NOT"
    " NULL, opened_at REAL NOT NULL, closed_at REAL)",
    "CREATE TABLE IF NOT EXISTS stream_changes (seq INTEGER PRIMARY KEY, at REAL"
    " NOT NULL, event TEXT NOT NULL, pk TEXT NOT NULL, sk TEXT NOT NULL, old_body TEXT,"
    " old_plain INTEGER, new_body TEXT, new_plain INTEGER)",
    # Opening a shard drops the shards before the newest one opened past the retention:
    # their successors opened before it, so every record of theirs is past it. The newest
    # record stays, so that the next one's rowid follows it.
    f"""CREATE TRIGGER IF NOT EXISTS stream_trim AFTER INSERT ON stream_shards BEGIN
        DELETE FROM stream_changes WHERE seq < min((SELECT first_seq FROM stream_shards
            WHERE opened_at < NEW.opened_at - {RETENTION_SECONDS} ORDER BY id DESC LIMIT 1),
            (SELECT max(seq) FROM stream_changes));
        DELETE FROM stream_shards WHERE id < (SELECT id FROM stream_shards
            WHERE opened_at < NEW.opened_at - {RETENTION_SECONDS} ORDER BY id DESC LIMIT 1);
    END""",
)

_NEXT = "coalesce((SELECT max(seq) FROM stream_changes), 0) + 1"
_NEXT_AUTOINCREMENT = (
    "coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'stream_changes'), 0) + 1"
)


def _open_shard(conn: sqlite3.Connection) -> str:
    """The statement opening a shard at the next record's number: the log of a file from
    before numbers records by an AUTOINCREMENT sequence, a newer one by rowid."""
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'stream_changes'").fetchone()
    following = _NEXT_AUTOINCREMENT if "AUTOINCREMENT" in sql else _NEXT
    return f"INSERT INTO stream_shards (first_seq, opened_at) SELECT {following}, {_NOW}"


def _rotate(open_shard: str) -> str:
    """`open_shard` when the open shard is ROTATE_SECONDS old."""
    return (
        f"{open_shard} WHERE coalesce((SELECT opened_at FROM stream_shards ORDER BY id DESC"
        f" LIMIT 1), -1) < {_NOW} - {ROTATE_SECONDS}"
    )


_TRIGGERS = ("stream_put", "stream_delete")
_EVENTS: dict[str, Literal["INSERT", "MODIFY", "REMOVE"]] = {
    "INSERT": "INSERT",
    "MODIFY": "MODIFY",
    "REMOVE": "REMOVE",
}


def _image(view: StreamView, which: str, body: str, plain: str) -> str:
    wanted = view in ("NEW_AND_OLD_IMAGES", f"{which}_IMAGE")
    return f"{body}, {plain}" if wanted else "NULL, NULL"


def _triggers(view: StreamView, open_shard: str) -> tuple[str, str]:
    """The triggers recording a put (an INSERT OR REPLACE) and a delete, with `view`'s
    images. A put looks its old row up once, in the WHEN that skips a write changing
    nothing, and once more joined to its record (the event and the old image)."""
    columns = "at, event, pk, sk, old_body, old_plain, new_body, new_plain"
    put = f"""CREATE TRIGGER stream_put BEFORE INSERT ON items
        WHEN NOT EXISTS (SELECT 1 FROM items WHERE pk = NEW.pk AND sk = NEW.sk
            AND body = NEW.body AND plain = NEW.plain)
        BEGIN
            {_rotate(open_shard)};
            INSERT INTO stream_changes ({columns}) SELECT {_NOW},
                CASE WHEN old.pk IS NULL THEN 'INSERT' ELSE 'MODIFY' END, NEW.pk, NEW.sk,
                {_image(view, "OLD", "old.body", "old.plain")},
                {_image(view, "NEW", "NEW.body", "NEW.plain")}
            FROM (SELECT 1) LEFT JOIN items AS old ON old.pk = NEW.pk AND old.sk = NEW.sk;
        END"""
    delete = f"""CREATE TRIGGER stream_delete BEFORE DELETE ON items BEGIN
            {_rotate(open_shard)};
            INSERT INTO stream_changes ({columns}) SELECT {_NOW}, 'REMOVE', OLD.pk, OLD.sk,
                {_image(view, "OLD", "OLD.body", "OLD.plain")}, NULL, NULL;
        END"""
    return put, delete


def turn_on(conn: sqlite3.Connection, view: StreamView) -> None:
    """Record every change from now on with `view`'s images, in a new shard (inside the
    caller's write transaction)."""
    turn_off(conn)
    open_shard = _open_shard(conn)
    for statement in _triggers(view, open_shard):
        conn.execute(statement)
    conn.execute(open_shard)


def turn_off(conn: sqlite3.Connection) -> None:
    """Stop recording and close the open shard (inside the caller's write transaction)."""
    for name in _TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    conn.execute(
        f"UPDATE stream_shards SET closed_at = {_NOW} WHERE closed_at IS NULL"
        " AND id = (SELECT max(id) FROM stream_shards)"
    )


def kept(conn: sqlite3.Connection) -> bool:
    """Whether the file has a change log: turning it on opens a shard, and the newest shard
    is never trimmed."""
    return conn.execute("SELECT 1 FROM stream_shards LIMIT 1").fetchone() is not None


def shard_id(number: int) -> str:
    return f"{_SHARD_PREFIX}{number:020d}"


def _shard_number(text: str) -> int:
    digits = text.removeprefix(_SHARD_PREFIX)
    if text == digits or not digits.isdigit():
        raise ValidationError(f"not a shard of this stream: {text!r}")
    return int(digits)


def _sequence(text: str) -> int:
    if not text.isdigit():
        raise ValidationError(f"a sequence number is decimal digits, not {text!r}")
    return int(text)


def _bounds(conn: sqlite3.Connection, position: Position) -> tuple[int, int, bool]:
    """The sequence a read from `position` goes on after, the one it stops before (the
    child shard's first), and whether the shard is closed."""
    number = _shard_number(position.shard_id)
    shard = conn.execute(
        "SELECT first_seq, closed_at FROM stream_shards WHERE id = ?", (number,)
    ).fetchone()
    if shard is None:
        oldest = conn.execute("SELECT min(id) FROM stream_shards").fetchone()[0]
        if oldest is not None and number < oldest:
            raise Trimmed(f"{position.shard_id} is past the stream's retention")
        raise ValidationError(f"the stream has no shard {position.shard_id}")
    first, closed_at = shard
    child = conn.execute(
        "SELECT first_seq FROM stream_shards WHERE id > ? ORDER BY id LIMIT 1", (number,)
    ).fetchone()
    end = _LAST if child is None else child[0]
    start = first - 1 if position.after is None else _sequence(position.after)
    return start, end, closed_at is not None or child is not None


class ChangeLog:
    """The change log of one SQLite file, read as a ChangeStream; `connect` gives the
    calling thread's connection to the file, `keys` the table's key attribute names, and
    `writes` tells of writes to the file, so a reader waits on them (Waking); a reader
    goes to its end without reading the records before it (Skipping)."""

    def __init__(
        self, connect: Callable[[], sqlite3.Connection], keys: tuple[str, str], writes: FileWrites
    ) -> None:
        self._connect = connect
        self._keys = keys
        self._writes = writes

    async def wait_for_writes(self, seconds: float) -> None:
        """Returns once the file was written since the last wait returned (by any
        process), or after `seconds`."""
        await self._writes.wait(seconds)

    async def close(self) -> None:
        """Stops being told of writes."""
        self._writes.close()

    async def shards(self) -> list[Shard]:
        rows = (
            self._connect()
            .execute("SELECT id, closed_at FROM stream_shards ORDER BY id")
            .fetchall()
        )
        return [
            Shard(
                shard_id(number),
                shard_id(number - 1) if number > 1 else None,
                closed_at is not None or number != rows[-1][0],
            )
            for number, closed_at in rows
        ]

    async def read(
        self, position: Position, limit: int = READ_LIMIT, *, within: Partitions | None = None
    ) -> Batch:
        if not 1 <= limit <= READ_LIMIT:
            raise ValidationError(f"limit must be between 1 and {READ_LIMIT}, not {limit}")
        conn = self._connect()
        conn.execute("BEGIN")  # one snapshot: the shard's end and its records agree
        try:
            start, end, closed = _bounds(conn, position)
            if within is None:
                rows = self._records(conn, position, start, end, limit)
                more = len(rows) > limit
                last = rows[limit - 1 if more else -1][0] if rows else None
            else:
                rows, more, last = self._kept(conn, position, start, end, limit, within)
        finally:
            conn.execute("COMMIT")
        records = [self._record(row) for row in rows[:limit]]
        following = position if last is None else Position(position.shard_id, str(last))
        return Batch(records, following, ended=closed and not more)

    async def skip(self, position: Position) -> Batch:
        """Past every record the shard holds after `position` now, none of them read."""
        conn = self._connect()
        conn.execute("BEGIN")  # one snapshot: the shard's end and its last record agree
        try:
            start, end, closed = _bounds(conn, position)
            last = conn.execute(
                "SELECT max(seq) FROM stream_changes WHERE seq > ? AND seq < ?", (start, end)
            ).fetchone()[0]
        finally:
            conn.execute("COMMIT")
        following = position if last is None else Position(position.shard_id, str(last))
        return Batch([], following, ended=closed)

    def _kept(
        self,
        conn: sqlite3.Connection,
        position: Position,
        start: int,
        end: int,
        limit: int,
        within: Partitions,
    ) -> tuple[list[tuple[Any, ...]], bool, int | None]:
        """The records within the partitions among the next SCAN_WINDOW after `start`:
        up to limit + 1 of them, whether the shard holds more after those read, and the
        last sequence read (None: none)."""
        window_end = min(end, start + SCAN_WINDOW + 1)
        clauses, values = [], []
        for key in within.keys:
            clauses.append("pk = ? OR (pk > ? AND pk < ?)")
            values += [key, key + DELIMITER, key + chr(ord(DELIMITER) + 1)]
        rows = self._records(
            conn, position, start, window_end, limit, f" AND ({' OR '.join(clauses)})", values
        )
        if len(rows) > limit:
            return rows, True, rows[limit - 1][0]
        scanned = conn.execute(
            "SELECT max(seq) FROM stream_changes WHERE seq > ? AND seq < ?", (start, window_end)
        ).fetchone()[0]
        more = (
            window_end < end
            and conn.execute(
                "SELECT 1 FROM stream_changes WHERE seq >= ? AND seq < ? LIMIT 1",
                (window_end, end),
            ).fetchone()
            is not None
        )
        if scanned is None and more:  # a gap wider than the window: step over it
            scanned = window_end - 1
        return rows, more, scanned

    def _records(
        self,
        conn: sqlite3.Connection,
        position: Position,
        after: int,
        end: int,
        limit: int,
        where: str = "",
        values: list[str] | None = None,
    ) -> list[tuple[Any, ...]]:
        """Up to limit + 1 records after `after` and before `end` within the retention (and
        the condition `where` on its `values`)."""
        cutoff = time.time() - RETENTION_SECONDS
        if position.after is not None:
            oldest = conn.execute(
                "SELECT at FROM stream_changes WHERE seq > ? AND seq < ? ORDER BY seq LIMIT 1",
                (after, end),
            ).fetchone()
            if oldest is not None and oldest[0] < cutoff:
                raise Trimmed(
                    f"the records after {position.after} of {position.shard_id} are past the "
                    "stream's retention"
                )
        rows: list[tuple[Any, ...]] = conn.execute(
            "SELECT seq, at, event, pk, sk, old_body, old_plain, new_body, new_plain"
            f" FROM stream_changes WHERE seq > ? AND seq < ? AND at >= ?{where}"
            " ORDER BY seq LIMIT ?",
            (after, end, cutoff, *(values or ()), limit + 1),
        ).fetchall()
        return rows

    def _record(self, row: tuple[Any, ...]) -> StreamRecord:
        seq, at, event, pk, sk, old_body, old_plain, new_body, new_plain = row
        return StreamRecord(
            sequence=str(seq),
            event=_EVENTS[event],
            keys={self._keys[0]: pk, self._keys[1]: sk},
            old=None if old_body is None else item_of(old_body, old_plain),
            new=None if new_body is None else item_of(new_body, new_plain),
            at=datetime.fromtimestamp(at, UTC),
        )

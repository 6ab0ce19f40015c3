"""The embedded store's change log beyond the stream contract: shards rotate and keep their
lineage, a reader goes past a shard's records without reading them, records past the
retention are skipped, refused at a position inside them, and dropped with their shards;
another process's writes and reads go through the same file; the stream is turned on and off
like DynamoDB's."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import pytest

from keygraph import capacity
from keygraph.plan import Delete, Get, Put
from keygraph.stores import admin_of, stream_of
from keygraph.stores.embedded.changes import READ_LIMIT, ROTATE_SECONDS, ChangeLog
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.stores.view import StoreView
from keygraph.streams import (
    RETENTION_SECONDS,
    Batch,
    NoStream,
    Partitions,
    Position,
    Skipping,
    StreamRecord,
    Trimmed,
)
from testkit.stores import TEST_TABLE
from tests.keygraph.stores.test_store_streams import everything, key, summary

STREAMED = dataclasses.replace(TEST_TABLE, stream="NEW_AND_OLD_IMAGES")
HOUR = 3600


@pytest.fixture
def store(tmp_path: Path) -> EmbeddedStore:
    return EmbeddedStore(STREAMED, path=tmp_path / "t.sqlite3")


def records_read(monkeypatch: pytest.MonkeyPatch) -> list[StreamRecord]:
    """The records every read of an embedded change log returns from now on, as they come."""
    read: list[StreamRecord] = []
    reading = ChangeLog.read

    async def counted(
        log: ChangeLog,
        position: Position,
        limit: int = READ_LIMIT,
        *,
        within: Partitions | None = None,
    ) -> Batch:
        batch = await reading(log, position, limit, within=within)
        read.extend(batch.records)
        return batch

    monkeypatch.setattr(ChangeLog, "read", counted)
    return read


def age(store: EmbeddedStore, seconds: float, shard: int | None = None) -> None:
    """Move the records (of one shard, or all) and the shards' opening that far back, as if
    written that long ago."""
    with closing(sqlite3.connect(store.path)) as conn, conn:
        if shard is None:
            conn.execute("UPDATE stream_changes SET at = at - ?", (seconds,))
            conn.execute("UPDATE stream_shards SET opened_at = opened_at - ?", (seconds,))
            return
        (first,) = conn.execute(
            "SELECT first_seq FROM stream_shards WHERE id = ?", (shard,)
        ).fetchone()
        conn.execute("UPDATE stream_changes SET at = at - ? WHERE seq >= ?", (seconds, first))
        conn.execute(
            "UPDATE stream_shards SET opened_at = opened_at - ? WHERE id = ?", (seconds, shard)
        )


async def test_a_shard_rotates_and_its_child_continues_it(store: EmbeddedStore) -> None:
    await store.put(Put({**key("a"), "n": 1}))
    age(store, ROTATE_SECONDS + 60)
    await store.put(Put({**key("b"), "n": 1}))
    stream = stream_of(store)
    parent, child = await stream.shards()
    assert parent.closed
    assert not child.closed
    assert child.parent_id == parent.shard_id
    done = await stream.read(Position(parent.shard_id))
    assert summary(done.records) == [("INSERT", "a", None, 1)]
    assert done.ended
    going = await stream.read(Position(child.shard_id))
    assert summary(going.records) == [("INSERT", "b", None, 1)]
    assert not going.ended


async def test_a_skip_goes_past_each_shards_records_to_its_end(store: EmbeddedStore) -> None:
    await store.put(Put({**key("a"), "n": 1}))
    age(store, ROTATE_SECONDS + 60)
    await store.put(Put({**key("b"), "n": 1}))
    await store.put(Put({**key("c"), "n": 1}))
    stream = stream_of(store)
    assert isinstance(stream, Skipping)
    parent, child = await stream.shards()
    done = await stream.skip(Position(parent.shard_id))
    assert (done.records, done.next, done.ended) == ([], Position(parent.shard_id, "1"), True)
    going = await stream.skip(Position(child.shard_id))
    assert (going.records, going.next, going.ended) == ([], Position(child.shard_id, "3"), False)
    assert await stream.skip(going.next) == going  # nothing since: it stays
    await store.put(Put({**key("d"), "n": 1}))
    after = await stream.read(going.next)
    assert summary(after.records) == [("INSERT", "d", None, 1)]


async def test_records_past_the_retention_are_skipped_or_refused(store: EmbeddedStore) -> None:
    await store.put(Put({**key("a"), "n": 1}))
    await store.put(Put({**key("b"), "n": 1}))
    age(store, RETENTION_SECONDS + 60)
    stream = stream_of(store)
    (shard,) = await stream.shards()  # one shard: no write since, so nothing rotated
    assert await everything(stream) == []
    await store.put(Put({**key("c"), "n": 1}))
    shards = await stream.shards()
    fresh = await stream.read(Position(shards[-1].shard_id))
    assert summary(fresh.records) == [("INSERT", "c", None, 1)]
    kept = await stream.read(Position(shard.shard_id))
    assert kept.records == []
    assert kept.ended
    with pytest.raises(Trimmed):
        await stream.read(Position(shard.shard_id, "1"))
    gone_b = await stream.read(Position(shard.shard_id, "2"))
    assert gone_b.records == []
    assert gone_b.ended


async def test_a_record_is_numbered_after_every_record_before_it_even_trimmed(
    store: EmbeddedStore,
) -> None:
    await store.put(Put({**key("a"), "n": 1}))
    admin = admin_of(store)
    admin.set_stream(None)
    admin.set_stream("NEW_AND_OLD_IMAGES")  # an empty shard, past the retention below
    age(store, 60 * HOUR)
    await store.put(Put({**key("b"), "n": 1}))  # opens a shard, trims the log before it
    with closing(sqlite3.connect(store.path)) as conn:
        numbers = [seq for (seq,) in conn.execute("SELECT seq FROM stream_changes")]
    assert numbers == [1, 2]  # the newest record stays: b's number follows a's
    assert summary(await everything(stream_of(store))) == [("INSERT", "b", None, 1)]


async def test_opening_a_shard_drops_the_shards_past_the_retention(store: EmbeddedStore) -> None:
    await store.put(Put({**key("a"), "n": 1}))
    age(store, 60 * HOUR)
    await store.put(Put({**key("b"), "n": 1}))  # opens shard 2
    age(store, 30 * HOUR, shard=2)
    await store.put(Put({**key("c"), "n": 1}))  # opens shard 3: shard 1 is all past it
    stream = stream_of(store)
    shards = await stream.shards()
    assert [s.shard_id[-1] for s in shards] == ["2", "3"]
    assert shards[0].parent_id is not None
    assert shards[0].parent_id.endswith("1")
    with pytest.raises(Trimmed):
        await stream.read(Position(shards[0].parent_id))
    with closing(sqlite3.connect(store.path)) as conn:
        assert conn.execute("SELECT count(*) FROM stream_changes").fetchone() == (2,)
    assert summary(await everything(stream)) == [("INSERT", "c", None, 1)]


RUN = """
import asyncio, json, sys
from dataclasses import replace
from keygraph.plan import BatchGet, Delete, Put
from keygraph.stores.embedded.store import EmbeddedStore
from testkit.stores import TEST_TABLE
from keygraph.stores import stream_of
from keygraph.streams import Position

async def main(path, what):
    store = EmbeddedStore(replace(TEST_TABLE, stream="NEW_AND_OLD_IMAGES"), path=path)
    if what == "cleanup":  # a task outside the server: deletes the items marked stale
        found = await store.batch_get(BatchGet(({"PK": "p", "SK": "a"}, {"PK": "p", "SK": "b"})))
        stale = [Delete({"PK": i["PK"], "SK": i["SK"]}) for i in found if i.get("stale")]
        await store.batch_write(stale)
    else:  # a reader: every sequence number it sees
        stream = stream_of(store)
        seen = []
        for shard in await stream.shards():
            seen += [r.sequence for r in (await stream.read(Position(shard.shard_id))).records]
        print(json.dumps(seen))
    await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def _run(path: Path, what: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(RUN), str(path), what],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


async def test_another_process_writes_and_reads_the_same_log(store: EmbeddedStore) -> None:
    await store.put(Put({**key("a"), "stale": True}))
    await store.put(Put({**key("b")}))
    _run(store.path, "cleanup")
    records = await everything(stream_of(store))
    assert [(r.event, r.keys["SK"]) for r in records] == [
        ("INSERT", "a"),
        ("INSERT", "b"),
        ("REMOVE", "a"),
    ]
    assert json.loads(_run(store.path, "read")) == [r.sequence for r in records]


async def test_the_stream_turns_on_and_off(tmp_path: Path) -> None:
    store = EmbeddedStore(TEST_TABLE, path=tmp_path / "t.sqlite3")
    await store.put(Put(key("before")))
    with pytest.raises(NoStream, match="no change stream"):
        stream_of(store)
    admin = admin_of(store)
    admin.set_stream("NEW_IMAGE")
    live = admin.describe()
    assert live is not None
    assert live.stream == "NEW_IMAGE"
    await store.put(Put({**key("on"), "n": 1}))
    admin.set_stream(None)
    await store.delete(Delete(key("on")))
    stream = stream_of(StoreView(store))  # a view is looked through
    (shard,) = await stream.shards()
    assert shard.closed
    batch = await stream.read(Position(shard.shard_id))
    assert summary(batch.records) == [("INSERT", "on", None, 1)]
    assert batch.ended
    live = admin.describe()
    assert live is not None
    assert live.stream is None


def test_a_store_without_a_stream_reader_is_refused() -> None:
    with pytest.raises(NoStream, match="object has no change stream"):
        stream_of(object())  # type: ignore[arg-type]


async def test_a_transaction_rolled_back_after_its_writes_leaves_no_record(
    store: EmbeddedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log is written with the items: a transaction that fails after writing an item
    (here, while counting the second item's capacity) takes the item and its record back."""
    await store.put(Put({**key("a"), "n": 1}))
    calls = 0

    def fail_second(**_: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("failed mid-transaction")

    monkeypatch.setattr(capacity, "add", fail_second)
    with pytest.raises(RuntimeError):
        await store.transact_write([Put({**key("a"), "n": 2}), Put({**key("b"), "n": 1})])
    monkeypatch.undo()
    assert calls == 2
    assert summary(await everything(stream_of(store))) == [("INSERT", "a", None, 1)]
    assert await store.get(Get(key("a"))) == {**key("a"), "n": 1}

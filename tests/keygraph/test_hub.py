"""The stream reader: it follows shards into their children, a feed of several topics gets
each change once, when the records it has not read yet are trimmed away under it, it goes
on from the oldest kept, a read that fails on one shard loses nothing it read of the
others, and on the embedded store it reads a write when it is made, not at its next
poll, and starts at the end of the change log without reading the records before it."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from generated.api import API
from generated.models.user import User
from generated.table import TABLE
from keygraph.api.watches import decoder
from keygraph.errors import StoreError
from keygraph.plan import Put
from keygraph.realtime.changes import Change, Topic
from keygraph.realtime.feed import Feed
from keygraph.realtime.hub import Hub
from keygraph.realtime.sources import StreamSource
from keygraph.stores import stream_of
from keygraph.stores.embedded.changes import ROTATE_SECONDS
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.streams import Batch, Partitions, Position, StreamRecord
from tests.keygraph.stores.test_store_embedded_changes import age, records_read
from tests.server.realtime.memory_stream import MemoryStream
from tests.waiting import until


def user_item(name: str, version: int) -> dict[str, object]:
    model = User(
        user_id="U1",
        email="u@acme.test",
        name=name,
        created_at="2026-01-01T00:00:00Z",
        version=version,
    )
    return model.to_item("acme")


def change_of(
    record: StreamRecord, shard_id: str, frontier: Mapping[str, str | None] | None = None
) -> Change | None:
    """The change a record makes, as the spec's API reads it."""
    return DECODE(record, shard_id, frontier or {})


def own_topic(item: dict[str, object]) -> Topic:
    """The topic of an item's own changes."""
    change = change_of(MemoryStream().append("INSERT", new=item), "shard-0")
    assert change is not None
    return change.topics[0]


DECODE = decoder(API, TABLE)
U1 = own_topic(user_item("a", 1))


async def names(feed: Feed, count: int) -> list[str]:
    found = []
    for _ in range(count):
        change = await asyncio.wait_for(feed.next(), 5)
        assert isinstance(change, Change)
        found.append(change.model.name)
    return found


async def test_the_reader_goes_on_from_the_oldest_kept_when_trimmed_under_it() -> None:
    stream = MemoryStream()
    hub = Hub(stream, poll_interval=0.01, decode=change_of)
    await hub.start()
    try:
        feed = hub.open("acme", U1)
        stream.append("INSERT", new=user_item("a", 1))
        assert await names(feed, 1) == ["a"]
        # unread by the reader, then trimmed away, before it polls again
        stream.append("MODIFY", old=user_item("a", 1), new=user_item("b", 2))
        stream.trim()
        stream.append("MODIFY", old=user_item("b", 2), new=user_item("c", 3))
        assert await names(feed, 1) == ["c"]
    finally:
        await hub.stop()


async def test_a_closed_feed_gets_nothing_and_is_forgotten() -> None:
    stream = MemoryStream()
    hub = Hub(stream, poll_interval=0.01, decode=change_of)
    await hub.start()
    try:
        feed = hub.open("acme", U1)
        hub.close(feed)
        assert isinstance(hub.source, StreamSource)
        reader = hub.source.reader
        record = stream.append("INSERT", new=user_item("a", 1))
        await until(
            lambda: record.sequence in reader.frontier().values(), "the reader to read the change"
        )
        assert hub.delivered == 0
    finally:
        await hub.stop()


TOPICS: dict[str, tuple[tuple[str, str], ...]] = {
    "x": (("x", "1"),),
    "y": (("y", "1"),),
    "both": (("x", "1"), ("y", "1")),
    "z": (("z", "1"),),
}
"""The topics a user's change is published on, by its name."""


def on_topics(record: Any, shard_id: str, frontier: Any) -> Change | None:
    change = change_of(record, shard_id, frontier)
    return None if change is None else replace(change, topics=TOPICS[change.model.name])


async def test_a_feed_of_several_topics_gets_each_change_once_in_order() -> None:
    stream = MemoryStream()
    hub = Hub(stream, poll_interval=0.01, decode=on_topics)
    await hub.start()
    try:
        feed = hub.open("acme", ("x", "1"), ("y", "1"))
        assert hub.open_feeds == 1
        for version, name in enumerate(("x", "both", "z", "y", "both"), start=1):
            stream.append("INSERT", new=user_item(name, version))
        assert await names(feed, 4) == ["x", "both", "y", "both"]
        hub.close(feed)
        assert hub.open_feeds == 0
        delivered = hub.delivered
        record = stream.append("INSERT", new=user_item("both", 6))
        assert isinstance(hub.source, StreamSource)
        reader = hub.source.reader
        await until(lambda: record.sequence in reader.frontier().values(), "the reader")
        assert hub.delivered == delivered  # closed on both topics
    finally:
        await hub.stop()


class FailingOnce(MemoryStream):
    """Two shards side by side; the next read of the second fails once `failing` is set."""

    def __init__(self) -> None:
        super().__init__(lanes=2)
        self.failing = False

    async def read(
        self, position: Position, limit: int = 1000, *, within: Partitions | None = None
    ) -> Batch:
        if self.failing and position.shard_id == "shard-1":
            self.failing = False
            raise StoreError("the second shard was not read")
        return await super().read(position, limit, within=within)


async def test_a_read_failing_on_one_shard_loses_nothing_read_of_another() -> None:
    stream = FailingOnce()
    hub = Hub(stream, poll_interval=0.01, decode=change_of)
    await hub.start()
    try:
        feed = hub.open("acme", U1)
        stream.failing = True
        stream.append("INSERT", new=user_item("a", 1))  # the first shard's
        stream.append("MODIFY", old=user_item("a", 1), new=user_item("b", 2))  # the second's
        assert await names(feed, 2) == ["a", "b"]
        assert not stream.failing
    finally:
        await hub.stop()


async def test_the_embedded_reader_reads_a_write_when_it_is_made(tmp_path: Path) -> None:
    path = tmp_path / "kg.sqlite3"
    read, written = EmbeddedStore(TABLE, path=path), EmbeddedStore(TABLE, path=path)
    hub = Hub(stream_of(read), poll_interval=3600, decode=change_of)  # no poll in the test
    await hub.start()
    try:
        feed = hub.open("acme", U1)
        for version, name in enumerate(["a", "b"], start=1):  # the first, and one after a wait
            await written.put(Put(item=user_item(name, version)))
            assert await names(feed, 1) == [name]
    finally:
        await hub.stop()
        await read.close()
        await written.close()


async def test_the_embedded_reader_starts_at_the_end_reading_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = EmbeddedStore(TABLE, path=tmp_path / "kg.sqlite3")
    await store.put(Put(item=user_item("a", 1)))
    age(store, ROTATE_SECONDS + 60)  # the next write opens a child shard
    for version, name in enumerate(["b", "c"], start=2):
        await store.put(Put(item=user_item(name, version)))
    stream = stream_of(store)
    read = records_read(monkeypatch)
    hub = Hub(stream, poll_interval=3600, decode=change_of)
    await hub.start()
    try:
        assert read == []
        feed = hub.open("acme", U1)
        await store.put(Put(item=user_item("d", 4)))
        assert await names(feed, 1) == ["d"]
        assert [record.new and record.new["name"] for record in read] == ["d"]
    finally:
        await hub.stop()
        await store.close()

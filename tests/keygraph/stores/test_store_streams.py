"""The change stream's contract, for every store that serves one: each write that changes an
item leaves one record (with its keys and images), in the order the writes were made; a
write that fails or changes nothing leaves none; a reader resumes from a Position.

Runs on the embedded store and on DynamoDB Local (DynamoDB Streams)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from keygraph.errors import ConditionFailed, TransactionCanceled, ValidationError
from keygraph.plan import Check, Condition, Delete, Put, StreamView, Update
from keygraph.store import Store
from keygraph.stores import stream_of
from keygraph.streams import ChangeStream, Position, StreamRecord
from testkit.stores import TEST_TABLE
from tests.conftest import StoreFactory

KINDS = ("embedded", pytest.param("dynamodb-local", marks=pytest.mark.dynamodb_local))


@pytest.fixture(params=KINDS)
def stream_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


async def _store(
    factory: StoreFactory, kind: str, view: StreamView = "NEW_AND_OLD_IMAGES"
) -> Store:
    return await factory(kind, dataclasses.replace(TEST_TABLE, stream=view))


@pytest.fixture
async def store(store_factory: StoreFactory, stream_kind: str) -> Store:
    return await _store(store_factory, stream_kind)


def key(sk: str) -> dict[str, str]:
    return {"PK": "p", "SK": sk}


async def everything(stream: ChangeStream) -> list[StreamRecord]:
    """Every record kept, shard after shard (parents first), read in small batches."""
    found: list[StreamRecord] = []
    for shard in await stream.shards():
        position = Position(shard.shard_id)
        while True:
            batch = await stream.read(position, limit=2)
            found += batch.records
            position = batch.next
            if batch.ended or not batch.records:
                break
    return found


def summary(records: list[StreamRecord]) -> list[tuple[Any, ...]]:
    """Each record as (event, sort key, old n, new n): what changed, and how."""

    def n(image: dict[str, Any] | None) -> Any:
        return None if image is None else image.get("n", "-")

    return [(r.event, r.keys["SK"], n(r.old), n(r.new)) for r in records]


async def test_every_write_path_leaves_one_record_per_item_changed(store: Store) -> None:
    await store.put(Put({**key("a"), "n": 1}))
    await store.put(Put({**key("a"), "n": 1}))  # changes nothing: no record
    await store.put(Put({**key("a"), "n": 2}))
    await store.update(Update(key("a"), {"n": 3}))
    await store.update(Update(key("u"), {"n": 1}))  # creates the item
    await store.delete(Delete(key("u")))
    await store.delete(Delete(key("u")))  # nothing to delete: no record
    await store.batch_write([Put({**key("b"), "n": 1}), Put({**key("c"), "n": 1})])
    await store.batch_write([Delete(key("b")), Delete(key("missing"))])
    await store.transact_write(
        [
            Put({**key("d"), "n": 1}),
            Update(key("c"), {"n": 2}),
            Delete(key("a")),
            Check(key("missing"), (Condition("not_exists", "PK"),)),
        ]
    )
    assert summary(await everything(stream_of(store))) == [
        ("INSERT", "a", None, 1),
        ("MODIFY", "a", 1, 2),
        ("MODIFY", "a", 2, 3),
        ("INSERT", "u", None, 1),
        ("REMOVE", "u", 1, None),
        ("INSERT", "b", None, 1),
        ("INSERT", "c", None, 1),
        ("REMOVE", "b", 1, None),
        ("INSERT", "d", None, 1),
        ("MODIFY", "c", 1, 2),
        ("REMOVE", "a", 3, None),
    ]


async def test_records_carry_keys_whole_images_and_the_time(store: Store) -> None:
    item = {**key("a"), "n": 1, "tags": {"x", "y"}, "nested": {"list": [1, "two", None]}}
    await store.put(Put(item))
    await store.delete(Delete(key("a")))
    insert, remove = await everything(stream_of(store))
    assert insert.keys == key("a") == remove.keys
    assert insert.new == item == remove.old
    assert insert.old is None
    assert remove.new is None
    assert int(insert.sequence) < int(remove.sequence)
    assert insert.sequence.isdigit()
    assert remove.sequence.isdigit()
    assert insert.at <= remove.at


async def test_a_failed_write_leaves_no_record(store: Store) -> None:
    await store.put(Put({**key("a"), "n": 1}))
    stream = stream_of(store)
    before = await everything(stream)
    exists = (Condition("exists", "PK"),)
    absent = (Condition("not_exists", "PK"),)
    with pytest.raises(ConditionFailed):
        await store.put(Put({**key("a"), "n": 2}, absent))
    with pytest.raises(ConditionFailed):
        await store.update(Update(key("b"), {"n": 1}, conditions=exists))
    with pytest.raises(ConditionFailed):
        await store.delete(Delete(key("b"), exists))
    with pytest.raises(TransactionCanceled):
        await store.transact_write(
            [Put({**key("c"), "n": 1}), Update(key("a"), {"n": 5}, conditions=absent)]
        )
    with pytest.raises(ValidationError):
        await store.batch_write([Put({**key("d"), "n": 1}), Put({**key("d"), "n": 2})])
    assert await everything(stream) == before


async def test_a_reader_resumes_from_a_position(store: Store) -> None:
    for n in range(7):
        await store.put(Put({**key(f"{n}"), "n": n}))
    stream = stream_of(store)
    shard = (await stream.shards())[-1]
    first = await stream.read(Position(shard.shard_id), limit=3)
    assert [r.keys["SK"] for r in first.records] == ["0", "1", "2"]
    assert first.next == Position(shard.shard_id, first.records[-1].sequence)
    assert not first.ended  # the open shard goes on
    rest = await stream.read(first.next)
    assert [r.keys["SK"] for r in rest.records] == ["3", "4", "5", "6"]
    idle = await stream.read(rest.next)
    assert (idle.records, idle.next) == ([], rest.next)
    await store.delete(Delete(key("0")))
    later = await stream.read(idle.next)
    assert summary(later.records) == [("REMOVE", "0", 0, None)]
    assert int(later.records[0].sequence) > int(rest.records[-1].sequence)


async def test_a_position_must_name_a_shard_and_a_sequence(store: Store) -> None:
    await store.put(Put(key("a")))
    stream = stream_of(store)
    shard = (await stream.shards())[-1]
    for bad in (Position("nonsense"), Position(shard.shard_id, "1e3")):
        with pytest.raises(ValidationError):
            await stream.read(bad)
    with pytest.raises(ValidationError):
        await stream.read(Position(shard.shard_id), limit=0)


@pytest.mark.parametrize(
    ("view", "old", "new"),
    [
        ("KEYS_ONLY", False, False),
        ("NEW_IMAGE", False, True),
        ("OLD_IMAGE", True, False),
        ("NEW_AND_OLD_IMAGES", True, True),
    ],
)
async def test_records_hold_the_images_the_view_names(
    store_factory: StoreFactory, stream_kind: str, view: StreamView, old: bool, new: bool
) -> None:
    store = await _store(store_factory, stream_kind, view)
    await store.put(Put({**key("a"), "n": 1}))
    await store.put(Put({**key("a"), "n": 2}))
    _, modify = await everything(stream_of(store))
    assert modify.event == "MODIFY"
    assert modify.keys == key("a")
    assert modify.old == ({**key("a"), "n": 1} if old else None)
    assert modify.new == ({**key("a"), "n": 2} if new else None)

"""A change stream read kept to some partitions (a tenant's items): every record of theirs
comes back once, in order, and none of another partition's, with each read's position past
the records it left out. The embedded store leaves them out in SQL within a bounded window;
DynamoDB Streams decodes none of their images and counts them in `skipped`.

Runs on the embedded store and on DynamoDB Local (DynamoDB Streams)."""

from __future__ import annotations

import pytest

from keygraph.plan import Put
from keygraph.store import Store
from keygraph.stores import stream_of
from keygraph.stores.embedded import changes
from keygraph.streams import ChangeStream, Partitions, Position, StreamRecord
from tests.conftest import StoreFactory
from tests.keygraph.stores.test_store_streams import _store

ACME = Partitions("PK", ("T#acme",))

KINDS = ("embedded", pytest.param("dynamodb-local", marks=pytest.mark.dynamodb_local))


@pytest.fixture(params=KINDS)
def stream_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


@pytest.fixture
async def store(store_factory: StoreFactory, stream_kind: str) -> Store:
    return await _store(store_factory, stream_kind)


async def kept_reads(
    stream: ChangeStream, within: Partitions, limit: int
) -> tuple[list[StreamRecord], int, int]:
    """Every record within the partitions, read shard after shard as a replay reads; the
    records skipped and the reads it took."""
    found: list[StreamRecord] = []
    skipped = reads = 0
    for shard in await stream.shards():
        position = Position(shard.shard_id)
        while True:
            batch = await stream.read(position, limit, within=within)
            reads += 1
            found += batch.records
            skipped += batch.skipped
            if batch.ended or batch.next == position:
                break
            position = batch.next
    return found, skipped, reads


@pytest.mark.parametrize(
    ("key", "held"),
    [
        ("T#acme", True),
        ("T#acme#USER#u1", True),
        ("T#acme2#USER#u1", False),
        ("T#acm", False),
        ("T#acme%23x#USER#u1", False),
        ("X#acme#USER", False),
    ],
)
def test_a_partition_holds_its_own_key_and_the_keys_below_it(key: str, held: bool) -> None:
    assert ACME.holds(key) is held
    assert ACME.holds(None) is False


async def test_a_kept_read_returns_every_record_of_the_partitions_once(
    store: Store, stream_kind: str
) -> None:
    tenants = ["acme", "other", "acme2"]
    for n in range(30):
        tenant = tenants[n % 3]
        await store.put(Put({"PK": f"T#{tenant}#USER#u{n}", "SK": "PROFILE", "n": n}))
    await store.put(Put({"PK": "T#acme", "SK": "ROOT", "n": 99}))
    stream = stream_of(store)
    found, skipped, _ = await kept_reads(stream, ACME, limit=4)
    assert [r.new["n"] for r in found if r.new] == [*range(0, 30, 3), 99]
    assert all(ACME.holds(r.keys["PK"]) for r in found)
    # DynamoDB Streams decodes nothing of the others; the embedded store never reads them
    assert skipped == (0 if stream_kind == "embedded" else 20)


async def test_a_kept_read_goes_on_past_a_window_of_other_partitions(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded store passes over at most SCAN_WINDOW records of others a read."""
    store = await _store(store_factory, "embedded")
    monkeypatch.setattr(changes, "SCAN_WINDOW", 5)
    for n in range(23):
        await store.put(Put({"PK": "T#other#USER#u", "SK": f"S{n}", "n": n}))
    await store.put(Put({"PK": "T#acme#USER#u", "SK": "PROFILE", "n": 1}))
    found, _, reads = await kept_reads(stream_of(store), ACME, limit=10)
    assert [r.keys["SK"] for r in found] == ["PROFILE"]
    assert reads >= 5  # each read passed over at most five records of another tenant

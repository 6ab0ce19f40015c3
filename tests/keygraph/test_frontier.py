"""Event cursors' frontiers: packed and read back exactly (leading zeros, shards with no
sequence yet), cursors of one shard from before still read, their size, and where a
resume reads from each shard of the stream."""

from __future__ import annotations

import random

import pytest

from keygraph.cursor import CursorCodec
from keygraph.errors import InvalidCursor
from keygraph.realtime.cursors import EventCursors
from keygraph.realtime.frontier import Frontier, merged, pack, plan, shard_key, unpack
from keygraph.streams import Position, Shard

CURSORS = EventCursors(CursorCodec(b"k" * 32))


def dynamodb_shards(count: int) -> list[str]:
    """Shard ids shaped as DynamoDB Streams names them."""
    return [
        f"shardId-{1732540000000 + n * 977:020d}-{0x4AB2CD3E + n * 7919:08x}" for n in range(count)
    ]


def keyed(sequences: dict[str, str | None]) -> dict[bytes, str | None]:
    return {shard_key(shard_id): sequence for shard_id, sequence in sequences.items()}


def test_a_frontier_reads_back_exactly() -> None:
    sequences: dict[str, str | None] = {
        "a": "000000000000000000012",
        "b": None,
        "c": "0",
        "d": "000",
        "e": "49545115243664218385648216023404064484839395853938278402",
        "f": "7",
    }
    assert unpack(pack(sequences)) == keyed(sequences)
    cursor = CURSORS.encode("acme", sequences)
    assert CURSORS.decode("acme", cursor) == Frontier(keyed(sequences), whole=True)
    assert CURSORS.decode("acme", CURSORS.encode("acme", sequences, whole=False)).whole is False


@pytest.mark.parametrize("data", [b"\x01\x02", b"123456", b"123456\x02\xff"])
def test_a_frontier_cut_short_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError, match="cut short"):
        unpack(data)


def test_a_cursor_of_one_shard_from_before_reads_as_that_shard_alone() -> None:
    old = CursorCodec(b"k" * 32).encode("acme", "change-stream", {}, {"s": "x", "q": "0042"})
    assert CURSORS.decode("acme", old) == Frontier({shard_key("x"): "0042"}, whole=False)


@pytest.mark.parametrize("packed", ["", "AAAA", 7])
def test_a_signed_cursor_without_a_frontier_is_invalid(packed: object) -> None:
    bare = CursorCodec(b"k" * 32).encode("acme", "change-stream", {}, {"f": packed})
    with pytest.raises(InvalidCursor):
        CURSORS.decode("acme", bare)


@pytest.mark.parametrize(
    ("count", "spread", "most"), [(4, 10**9, 140), (32, 10**9, 700), (32, 10**28, 1200)]
)
def test_a_cursor_stays_small(count: int, spread: int, most: int) -> None:
    rng = random.Random(count)
    base = 4421584500000000017450439091 if spread < 10**28 else 0
    sequences: dict[str, str | None] = {
        shard_id: str(base + rng.randrange(spread)) for shard_id in dynamodb_shards(count)
    }
    assert len(CURSORS.encode("acme", sequences)) <= most


def test_merged_keeps_each_shards_furthest_sequence() -> None:
    assert merged({"a": "5", "b": None, "c": "9"}, {"a": "7", "b": "3", "c": None, "d": None}) == {
        "a": "7",
        "b": "3",
        "c": "9",
        "d": None,
    }


SHARDS = [
    Shard("root", None, closed=True),
    Shard("left", "root", closed=False),
    Shard("right", "root", closed=True),
    Shard("right-child", "right", closed=False),
    Shard("other", None, closed=False),
    Shard("later", None, closed=False),
]


def test_a_resume_reads_the_cursors_shards_after_it_and_the_rest_from_their_start() -> None:
    frontier = Frontier(keyed({"left": "10", "right": "20", "other": None}))
    resumed = plan(SHARDS, frontier)
    assert resumed.positions == [
        Position("left", "10"),
        Position("right", "20"),
        Position("right-child"),
        Position("other"),
        Position("later"),
    ]
    assert not resumed.lost


def test_a_cursor_of_one_shard_reads_its_lineage_alone_until_its_shard_is_gone() -> None:
    frontier = Frontier(keyed({"right": "20"}), whole=False)
    assert plan(SHARDS, frontier).positions == [Position("right", "20"), Position("right-child")]
    gone = plan(SHARDS[3:], frontier)
    assert gone.lost
    assert gone.positions == [Position(s.shard_id) for s in SHARDS[3:]]


def test_a_cursor_naming_a_shard_no_longer_kept_is_lost_and_reads_its_children() -> None:
    resumed = plan(SHARDS[3:], Frontier(keyed({"right": "20", "other": "5", "later": "6"})))
    assert resumed.lost
    assert resumed.positions == [
        Position("right-child"),
        Position("other", "5"),
        Position("later", "6"),
    ]

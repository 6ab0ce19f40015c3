"""Contract: queries on the table and on GSIs: key conditions in UTF-8 byte order, both
directions, pagination, sparse membership, projections, and DynamoDB's refusals."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from keygraph.errors import ValidationError
from keygraph.plan import Put, Query, SortCondition, Update
from keygraph.store import Store

# Byte order differs from code point order only where UTF-8 says so; sorting by the UTF-8
# encoding is DynamoDB's documented order for string keys.
SORT_KEYS = ["a", "b", "ba", "bb", "c", "Z", "é", "z", "😀", "b😀", "bé", "B"]
ORDERED = sorted(SORT_KEYS, key=str.encode)

CONDITIONS: dict[str, tuple[SortCondition, Callable[[bytes], bool]]] = {
    "eq": (SortCondition("eq", "ba"), lambda s: s == b"ba"),
    "begins_with": (SortCondition("begins_with", "b"), lambda s: s.startswith(b"b")),
    "begins_with-nonascii": (
        SortCondition("begins_with", "é"),
        lambda s: s.startswith("é".encode()),
    ),
    "between": (SortCondition("between", "b", "c"), lambda s: b"b" <= s <= b"c"),
    "lt": (SortCondition("lt", "c"), lambda s: s < b"c"),
    "le": (SortCondition("le", "c"), lambda s: s <= b"c"),
    "gt": (SortCondition("gt", "z"), lambda s: s > b"z"),
    "ge": (SortCondition("ge", "z"), lambda s: s >= b"z"),
}


async def fill(store: Store, partition: str = "q") -> None:
    for i, sk in enumerate(SORT_KEYS):
        await store.put(
            Put({"PK": partition, "SK": sk, "i": i, "GSI1PK": f"g-{partition}", "GSI1SK": sk})
        )


def sks(items: list[dict[str, object]]) -> list[object]:
    return [item["SK"] for item in items]


async def test_query_returns_the_partition_in_byte_order(store: Store) -> None:
    await fill(store)
    await fill(store, "other")
    result = await store.query(Query("q"))
    assert sks(result.items) == ORDERED
    assert result.last_key is None
    backwards = await store.query(Query("q", forward=False))
    assert sks(backwards.items) == ORDERED[::-1]


@pytest.mark.parametrize("index", [None, "GSI1"])
async def test_key_conditions(store: Store, index: str | None) -> None:
    await fill(store)
    partition = "q" if index is None else "g-q"
    for name, (condition, wanted) in CONDITIONS.items():
        expected = [sk for sk in ORDERED if wanted(sk.encode())]
        forward = await store.query(Query(partition, index=index, sort=condition))
        assert sks(forward.items) == expected, name
        reverse = await store.query(Query(partition, index=index, sort=condition, forward=False))
        assert sks(reverse.items) == expected[::-1], name


async def walk(store: Store, index: str | None, forward: bool, limit: int) -> list[object]:
    partition = "q" if index is None else "g-q"
    seen: list[object] = []
    start = None
    pages = 0
    while True:
        result = await store.query(
            Query(partition, index=index, forward=forward, limit=limit, start=start)
        )
        assert len(result.items) <= limit
        seen += sks(result.items)
        pages += 1
        if result.last_key is None:
            break
        # The last evaluated key is the last item's key (with the index keys on a GSI).
        last = result.items[-1]
        assert result.last_key == {name: last[name] for name in result.last_key}
        expected_names = {"PK", "SK"} | ({"GSI1PK", "GSI1SK"} if index else set())
        assert set(result.last_key) == expected_names
        start = result.last_key
    # A full last page still carries a key (DynamoDB does not look ahead): one empty page.
    assert pages == len(ORDERED) // limit + 1
    return seen


@pytest.mark.parametrize("index", [None, "GSI1"])
async def test_pagination_walks(store: Store, index: str | None) -> None:
    await fill(store)
    for limit in (1, 3, 5):
        assert await walk(store, index, True, limit) == ORDERED
        assert await walk(store, index, False, limit) == ORDERED[::-1]


async def test_pagination_with_a_sort_condition(store: Store) -> None:
    await fill(store)
    condition = SortCondition("begins_with", "b")
    first = await store.query(Query("q", sort=condition, limit=2))
    rest = await store.query(Query("q", sort=condition, start=first.last_key))
    assert sks(first.items) + sks(rest.items) == [s for s in ORDERED if s.startswith("b")]


async def test_sparse_index_holds_only_items_with_both_keys(store: Store) -> None:
    await store.put(Put({"PK": "s", "SK": "1", "SPK": "open", "SSK": "2024-01", "status": "A"}))
    await store.put(Put({"PK": "s", "SK": "2", "SPK": "open"}))  # no sort key: not indexed
    await store.put(Put({"PK": "s", "SK": "3", "status": "B"}))  # no keys: not indexed
    await store.put(Put({"PK": "s", "SK": "4", "SPK": "open", "SSK": "2024-02", "x": 1}))
    result = await store.query(Query("open", index="Sparse"))
    # INCLUDE projection: table keys, index keys and `status` only.
    assert result.items == [
        {"PK": "s", "SK": "1", "SPK": "open", "SSK": "2024-01", "status": "A"},
        {"PK": "s", "SK": "4", "SPK": "open", "SSK": "2024-02"},
    ]
    await store.update(Update({"PK": "s", "SK": "1"}, remove=("SSK",)))
    await store.update(Update({"PK": "s", "SK": "2"}, set={"SSK": "2024-03"}))
    result = await store.query(Query("open", index="Sparse"))
    assert sks(result.items) == ["4", "2"]


async def test_index_entry_moves_with_its_item(store: Store) -> None:
    await store.put(Put({"PK": "m", "SK": "1", "GSI1PK": "old", "GSI1SK": "a"}))
    await store.update(Update({"PK": "m", "SK": "1"}, set={"GSI1PK": "new"}))
    assert (await store.query(Query("old", index="GSI1"))).items == []
    moved = await store.query(Query("new", index="GSI1"))
    assert moved.items == [{"PK": "m", "SK": "1", "GSI1PK": "new", "GSI1SK": "a"}]


async def test_page_stops_after_one_megabyte(store: Store) -> None:
    body = "y" * 300_000
    for i in range(5):
        await store.put(Put({"PK": "mb", "SK": f"{i}", "d": body}))
    # 300 KB items: the fourth crosses 1 MB, and the page ends with it.
    first = await store.query(Query("mb"))
    assert sks(first.items) == ["0", "1", "2", "3"]
    assert first.last_key == {"PK": "mb", "SK": "3"}
    rest = await store.query(Query("mb", start=first.last_key))
    assert sks(rest.items) == ["4"]
    assert rest.last_key is None


REFUSED = [
    # limit 0, consistent read on a GSI, unknown index, reversed between, a start key
    # missing the sort key, in another partition, outside the condition, without index keys
    Query("q", limit=0),
    Query("g-q", index="GSI1", consistent=True),
    Query("q", index="NoSuchIndex"),
    Query("q", sort=SortCondition("between", "c", "b")),
    Query("q", start={"PK": "q"}),
    Query("q", start={"PK": "elsewhere", "SK": "a"}),
    Query("q", sort=SortCondition("begins_with", "b"), start={"PK": "q", "SK": "c"}),
    Query("g-q", index="GSI1", start={"PK": "q", "SK": "a"}),
]


async def test_queries_dynamodb_refuses(store: Store) -> None:
    await fill(store)
    for plan in REFUSED:
        with pytest.raises(ValidationError):
            await store.query(plan)


async def test_consistent_query_on_the_table(store: Store) -> None:
    await fill(store)
    result = await store.query(Query("q", consistent=True, limit=2))
    assert sks(result.items) == ORDERED[:2]

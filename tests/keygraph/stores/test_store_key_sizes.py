"""Contract: keys over DynamoDB's limits (partition 2,048 bytes of UTF-8, sort 1,024, on the
table and on every index, and a query's sort condition values) are refused alike by both
stores, as ValidationError, and nothing is written."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from keygraph.errors import ValidationError
from keygraph.plan import BatchGet, Check, Condition, Delete, Get, Put, Query, SortCondition, Update
from keygraph.store import Store

P, S = 2048, 1024
WIDE = "é"
"""Two bytes in UTF-8: a limit counts bytes, not characters."""


def over(limit: int) -> str:
    return WIDE * (limit // 2) + "x"


def key(pk: str = "p", sk: str = "s") -> dict[str, str]:
    return {"PK": pk, "SK": sk}


def refused(store: Store) -> list[Callable[[], Awaitable[Any]]]:
    index_keys: list[dict[str, str]] = [
        {"GSI1PK": over(P), "GSI1SK": "x"},
        {"GSI1PK": "g", "GSI1SK": over(S)},
        {"SPK": "g", "SSK": over(S)},
    ]
    return [
        lambda: store.get(Get(key(over(P)))),
        lambda: store.get(Get(key(sk=over(S)))),
        lambda: store.batch_get(BatchGet((key(over(P)),))),
        lambda: store.put(Put(key(sk=over(S)))),
        lambda: store.delete(Delete(key(over(P)))),
        *(lambda k=k: store.put(Put({**key(), **k})) for k in index_keys),
        *(lambda k=k: store.update(Update(key("u"), set=k)) for k in index_keys),
        *(lambda k=k: store.batch_write([Put({**key("b"), **k})]) for k in index_keys),
        lambda: store.transact_write([Put({**key("t"), "GSI1PK": over(P), "GSI1SK": "x"})]),
        lambda: store.transact_write([Put(key("t")), Put(key(over(P)))]),
        lambda: store.transact_write(
            [Check(key(over(P)), (Condition("exists", "PK"),)), Put(key("t"))]
        ),
        lambda: store.query(Query("p", sort=SortCondition("eq", over(S)))),
        lambda: store.query(Query("p", sort=SortCondition("begins_with", over(S)))),
        lambda: store.query(Query("p", sort=SortCondition("between", "a", over(S)))),
        lambda: store.query(Query("g", index="GSI1", sort=SortCondition("lt", over(S)))),
    ]


async def test_keys_over_the_limits_are_refused_and_write_nothing(store: Store) -> None:
    for attempt in refused(store):
        with pytest.raises(ValidationError):
            await attempt()
    for written in (key(), key("u"), key("b"), key("t")):
        assert await store.get(Get(written)) is None


async def test_keys_at_the_limits_are_taken(store: Store) -> None:
    pk, sk = WIDE * (P // 2), WIDE * (S // 2)
    item = {**key(pk, sk), "GSI1PK": pk, "GSI1SK": sk}
    await store.put(Put(item))
    assert await store.get(Get(key(pk, sk))) == item
    found = await store.query(Query(pk, index="GSI1", sort=SortCondition("eq", sk)))
    assert found.items == [item]
    between = await store.query(Query(pk, sort=SortCondition("between", sk, sk)))
    assert between.items == [item]

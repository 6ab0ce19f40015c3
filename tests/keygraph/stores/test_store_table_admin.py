"""Table administration with DynamoDB's semantics, on both stores: an index created on a
table holding items holds every item carrying its key attributes (as strings), one deleted
is gone, TTL follows, and the description says so."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from keygraph.errors import ValidationError
from keygraph.plan import IndexDef, Put, Query
from keygraph.stores import admin_of
from testkit.stores import TEST_TABLE
from tests.conftest import StoreFactory

BY_STATUS = IndexDef("ByStatus", "status", "SK", "INCLUDE", ("n",))
ITEMS: list[dict[str, Any]] = [
    {"PK": "a", "SK": "1", "status": "open", "n": 1, "extra": "x"},
    {"PK": "a", "SK": "2", "status": "open"},
    {"PK": "b", "SK": "1", "status": "shut"},
    {"PK": "b", "SK": "2", "n": 5},  # no status: not in the index
    {"PK": "c", "SK": "1", "status": 7},  # a number: not in a string-keyed index
]


async def test_an_index_added_to_a_table_with_items_holds_them(
    store_factory: StoreFactory, kind: str
) -> None:
    table = dataclasses.replace(TEST_TABLE, indexes=TEST_TABLE.indexes[:1], ttl_attribute=None)
    store = await store_factory(kind, table)
    for item in ITEMS:
        await store.put(Put(item))
    admin = admin_of(store)
    live = admin.describe()
    assert live is not None
    assert sorted(live.indexes) == ["GSI1"]
    admin.create_index(BY_STATUS)
    live = admin.describe()
    assert live is not None
    assert live.indexes["ByStatus"].index == BY_STATUS
    assert live.indexes["ByStatus"].status == "ACTIVE"
    # the code of the new definition knows the index (the embedded store reads its file's)
    known = store.table  # type: ignore[attr-defined]
    store.table = dataclasses.replace(known, indexes=(*known.indexes, BY_STATUS))  # type: ignore[attr-defined]
    found = await store.query(Query("open", index="ByStatus"))
    assert found.items == [
        {"PK": "a", "SK": "1", "status": "open", "n": 1},
        {"PK": "a", "SK": "2", "status": "open"},
    ]
    await store.put(Put({"PK": "d", "SK": "1", "status": "shut"}))  # written after: indexed
    shut = await store.query(Query("shut", index="ByStatus"))
    assert [item["PK"] for item in shut.items] == ["b", "d"]
    admin.delete_index("ByStatus")
    live = admin.describe()
    assert live is not None
    assert sorted(live.indexes) == ["GSI1"]
    with pytest.raises(ValidationError):
        await store.query(Query("open", index="ByStatus"))


async def test_ttl_follows_the_setting(store_factory: StoreFactory, kind: str) -> None:
    store = await store_factory(kind, dataclasses.replace(TEST_TABLE, ttl_attribute=None))
    admin = admin_of(store)
    admin.set_ttl("expires_at")
    live = admin.describe()
    assert live is not None
    assert live.ttl_attribute == "expires_at"


async def test_the_stream_follows_the_definition_and_the_setting(
    store_factory: StoreFactory, kind: str
) -> None:
    store = await store_factory(kind, dataclasses.replace(TEST_TABLE, stream="NEW_IMAGE"))
    admin = admin_of(store)
    views = []
    for view in ("KEYS_ONLY", None, "NEW_AND_OLD_IMAGES"):
        live = admin.describe()
        assert live is not None
        views.append(live.stream)
        admin.set_stream(view)
    live = admin.describe()
    assert live is not None
    assert [*views, live.stream] == ["NEW_IMAGE", "KEYS_ONLY", None, "NEW_AND_OLD_IMAGES"]

"""Contract: a batch of Queries (`query_each`; the embedded store reads it in one statement)
answers as one Query a plan does, pages, projections and refusals included; and the
embedded store reads a batch (of Queries, or a BatchGetItem's keys) in one statement."""

from __future__ import annotations

import sqlite3

import pytest

from keygraph.errors import ValidationError
from keygraph.plan import BatchGet, Put, Query
from keygraph.store import Store, query_each
from keygraph.stores.embedded.store import EmbeddedStore
from tests.conftest import StoreFactory
from tests.keygraph.stores.test_store_query import CONDITIONS, REFUSED, fill


async def _filled(store: Store) -> None:
    await fill(store)
    await fill(store, "other")
    await store.put(Put({"PK": "s", "SK": "1", "SPK": "open", "SSK": "2024-01", "status": "A"}))
    await store.put(Put({"PK": "s", "SK": "4", "SPK": "open", "SSK": "2024-02", "x": 1}))
    for i in range(5):  # 300 KB each: a page ends with the fourth
        await store.put(Put({"PK": "mb", "SK": f"{i}", "d": "y" * 300_000}))


def _plans() -> list[Query]:
    plans = [Query("q"), Query("q", forward=False), Query("nothing here"), Query("mb")]
    for condition, _ in CONDITIONS.values():
        plans += [Query("q", sort=condition, limit=3), Query("g-other", "GSI1", condition)]
    plans += [
        Query("g-q", "GSI1", forward=False, limit=4),
        Query("q", limit=2, start={"PK": "q", "SK": "b"}),
        Query(
            "g-q", "GSI1", limit=2, start={"PK": "q", "SK": "ba", "GSI1PK": "g-q", "GSI1SK": "ba"}
        ),
        Query("open", "Sparse"),
        Query("mb", start={"PK": "mb", "SK": "3"}),
        Query("q", consistent=True),
    ]
    return plans


async def test_a_batch_answers_as_one_query_a_plan(store: Store) -> None:
    await _filled(store)
    plans = _plans()
    each = [await store.query(plan) for plan in plans]
    assert await query_each(store, plans) == each
    assert await query_each(store, plans[::-1]) == each[::-1]
    assert await query_each(store, []) == []


@pytest.mark.parametrize("refused", REFUSED, ids=lambda plan: repr(plan)[:60])
async def test_a_batch_with_a_refused_plan_is_refused(store: Store, refused: Query) -> None:
    await fill(store)
    with pytest.raises(ValidationError):
        await query_each(store, [Query("q"), refused])


def _selects(store: EmbeddedStore) -> tuple[sqlite3.Connection, list[str]]:
    """The store's connection, tracing the SELECT statements it runs into the list."""
    statements: list[str] = []
    conn: sqlite3.Connection = store._conn()

    def trace(statement: str) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            statements.append(statement)

    conn.set_trace_callback(trace)
    return conn, statements


async def test_the_embedded_store_reads_a_batch_in_one_statement(
    store_factory: StoreFactory,
) -> None:
    store = await store_factory("embedded")
    assert isinstance(store, EmbeddedStore)
    await _filled(store)
    conn, statements = _selects(store)
    try:
        await query_each(store, [Query("q"), Query("g-q", "GSI1"), Query("open", "Sparse")])
        assert len(statements) == 1
        keys = tuple({"PK": pk, "SK": sk} for pk, sk in [("q", "a"), ("mb", "2"), ("q", "?")])
        found = await store.batch_get(BatchGet(keys))
        assert len(statements) == 2
    finally:
        conn.set_trace_callback(None)
    assert sorted((item["PK"], item["SK"]) for item in found) == [("mb", "2"), ("q", "a")]

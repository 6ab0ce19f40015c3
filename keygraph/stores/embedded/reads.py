"""Reads of the embedded store's items table: Query and Scan pages (DynamoDB's 1 MB page,
index projections), a batch of Queries in one statement, and a BatchGetItem's keys in one."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterable, Sequence

import orjson

from keygraph import capacity
from keygraph.plan import Floats, Item, Query, QueryResult, TableDef

from . import keyrange
from .values import PLAIN, item_of

PAGE_BYTES = 1024 * 1024
BATCH_PLANS = 200
"""The most Queries one statement reads (SQLite allows 32,766 parameters)."""


@functools.cache
def point_reads(count: int) -> str:
    """The statement reading `count` items by key, (pk, sk) pairs as its parameters, in one
    pass: (body, plain, size) of each item found, in the order of the keys."""
    keys = ", ".join(["(?, ?)"] * count)
    return (
        f"WITH k(pk, sk) AS (VALUES {keys}) SELECT body, plain, size FROM k"
        " JOIN items ON items.pk = k.pk AND items.sk = k.sk"
    )


def page(
    rows: Iterable[tuple[str, int, int]], floats: Floats = frozenset()
) -> tuple[list[Item], int, bool]:
    """The items of (body, size, plain) rows up to DynamoDB's 1 MB page: (items, bytes
    read, whether the page filled before the rows ended), the numbers named in `floats` as
    floats."""
    items: list[Item] = []
    read = 0
    for body, size, plain in rows:
        # a plain body is its item as JSON: decoded here, without a call per item
        items.append(
            orjson.loads(body) if plain == PLAIN and not floats else item_of(body, plain, floats)
        )
        read += size
        if read >= PAGE_BYTES:
            return items, read, True
    return items, read, False


def _result(
    table: TableDef,
    live: TableDef,
    plan: Query,
    sql: keyrange.QuerySQL,
    found: tuple[list[Item], int, bool],
) -> QueryResult:
    """A Query's answer from its page: the last key when more may follow, the index's
    projection, and the read capacity it costs."""
    items, read, full = found
    capacity.add(capacity.read_units(read, plan.consistent))
    last_key = None
    if items and (full or len(items) == plan.limit):
        last_key = {name: items[-1][name] for name in sql.key_names}
    if plan.index is not None:
        index = live.index(plan.index)
        if index.projection != "ALL":
            keep = {table.partition_key, table.sort_key, index.partition_key}
            if index.sort_key:
                keep.add(index.sort_key)
            if index.projection == "INCLUDE":
                keep.update(index.include)
            items = [{k: v for k, v in item.items() if k in keep} for item in items]
    return QueryResult(items, last_key)


def _select(sql: keyrange.QuerySQL, columns: str) -> str:
    return f"SELECT {columns} FROM items WHERE {sql.where} ORDER BY {sql.order} LIMIT ?"


def query(conn: sqlite3.Connection, table: TableDef, live: TableDef, plan: Query) -> QueryResult:
    """One Query's page over the file's live indexes."""
    sql = keyrange.build(live, plan)
    limit = plan.limit if plan.limit is not None else -1
    cursor = conn.execute(_select(sql, "body, size, plain"), [*sql.params, limit])
    try:
        found = page(cursor, plan.floats)
    finally:
        cursor.close()
    return _result(table, live, plan, sql, found)


def queries(
    conn: sqlite3.Connection, table: TableDef, live: TableDef, plans: Sequence[Query]
) -> list[QueryResult]:
    """Each Query's page, as `query` gives it, read in one statement (a UNION ALL of the
    Queries, each part in its own order) per BATCH_PLANS plans."""
    results: list[QueryResult] = []
    for start in range(0, len(plans), BATCH_PLANS):
        chunk = plans[start : start + BATCH_PLANS]
        built = [keyrange.build(live, plan) for plan in chunk]
        parts: list[str] = []
        params: list[object] = []
        for number, (plan, sql) in enumerate(zip(chunk, built, strict=True)):
            parts.append(f"SELECT * FROM ({_select(sql, f'{number}, body, size, plain')})")
            params += [*sql.params, plan.limit if plan.limit is not None else -1]
        items: list[list[Item]] = [[] for _ in chunk]
        read = [0] * len(chunk)
        cursor = conn.execute(" UNION ALL ".join(parts), params)
        try:
            for number, body, size, plain in cursor:
                if read[number] < PAGE_BYTES:  # the page ends with the item that fills it
                    items[number].append(item_of(body, plain, chunk[number].floats))
                    read[number] += size
        finally:
            cursor.close()
        results += [
            _result(table, live, plan, sql, (found, bytes_read, bytes_read >= PAGE_BYTES))
            for plan, sql, found, bytes_read in zip(chunk, built, items, read, strict=True)
        ]
    return results

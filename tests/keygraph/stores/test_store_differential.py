"""Differential: random sequences of writes, transactions and reads give identical results
and errors on the embedded store and on DynamoDB Local."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from keygraph.errors import ConditionFailed, StoreError, TransactionCanceled
from keygraph.plan import (
    BatchGet,
    Check,
    Condition,
    Delete,
    Get,
    Put,
    Query,
    SortCondition,
    Update,
)
from keygraph.store import Store
from testkit.stores import TEST_TABLE, drop_store, open_store

pytestmark = pytest.mark.dynamodb_local

PARTITIONS = ["a", "é"]
SORT_KEYS = ["1", "2", "Z", "z", "é", "😀"]
INDEX_SORTS = ["m", "n", "né"]
VALUES = st.sampled_from([0, 1, -2, Decimal("1.5"), "x", "y", True, None, b"\x01", {"k": 1}])
NAMESPACES = itertools.count()


@st.composite
def conditions(draw: st.DrawFn) -> tuple[Condition, ...]:
    atoms = st.one_of(
        st.builds(
            Condition, st.sampled_from(["exists", "not_exists"]), st.sampled_from(["PK", "v", "s"])
        ),
        st.builds(Condition, st.just("equals"), st.sampled_from(["v", "s"]), VALUES),
    )
    return tuple(draw(st.lists(atoms, max_size=2)))


@st.composite
def keys(draw: st.DrawFn) -> dict[str, str]:
    return {"PK": draw(st.sampled_from(PARTITIONS)), "SK": draw(st.sampled_from(SORT_KEYS))}


@st.composite
def attributes(draw: st.DrawFn, key: dict[str, str]) -> dict[str, Any]:
    """Non-key attributes; index sort keys end with the item's key, so no two items tie."""
    suffix = f"#{key['PK']}#{key['SK']}"
    chosen: dict[str, Any] = {}
    for name in draw(st.sets(st.sampled_from(["v", "s", "status", "gsi1", "sparse"]))):
        if name == "gsi1":
            chosen["GSI1PK"] = draw(st.sampled_from(["g", "h"]))
            chosen["GSI1SK"] = draw(st.sampled_from(INDEX_SORTS)) + suffix
        elif name == "sparse":
            chosen["SPK"] = "open"
            chosen["SSK"] = draw(st.sampled_from(INDEX_SORTS)) + suffix
        else:
            chosen[name] = draw(VALUES)
    return chosen


@st.composite
def puts(draw: st.DrawFn) -> Put:
    key = draw(keys())
    return Put({**key, **draw(attributes(key))}, draw(conditions()))


@st.composite
def updates(draw: st.DrawFn) -> Update:
    key = draw(keys())
    removable = ["v", "s", "status", "SPK", "GSI1SK"]
    remove = tuple(draw(st.lists(st.sampled_from(removable), max_size=2, unique=True)))
    return Update(key, draw(attributes(key)), remove, draw(conditions()))


def sorts(values: list[str]) -> st.SearchStrategy[SortCondition | None]:
    simple = st.builds(
        SortCondition,
        st.sampled_from(["eq", "begins_with", "lt", "le", "gt", "ge"]),
        st.sampled_from(values),
    )
    between = st.builds(
        lambda a, b: SortCondition("between", min(a, b), max(a, b)),
        st.sampled_from(values),
        st.sampled_from(values),
    )
    return st.none() | simple | between


@st.composite
def queries(draw: st.DrawFn) -> Query:
    index = draw(st.sampled_from([None, "GSI1", "Sparse"]))
    partitions = {None: PARTITIONS, "GSI1": ["g", "h"], "Sparse": ["open"]}[index]
    sort_values = SORT_KEYS if index is None else INDEX_SORTS
    return Query(
        draw(st.sampled_from(partitions)),
        index=index,
        sort=draw(sorts(sort_values)),
        forward=draw(st.booleans()),
        limit=draw(st.sampled_from([None, 1, 2, 3])),
    )


def _action_key(action: Put | Update | Delete | Check) -> tuple[str, str]:
    key = action.item if isinstance(action, Put) else action.key
    return (key["PK"], key["SK"])


OPERATIONS = st.one_of(
    puts(),
    updates(),
    st.builds(Delete, keys(), conditions()),
    st.builds(Get, keys()),
    st.builds(lambda ks: BatchGet(tuple(ks)), st.lists(keys(), min_size=1, max_size=4)),
    queries(),
    # Distinct items per transaction: DynamoDB refuses two actions on one item up front,
    # while DynamoDB Local first evaluates the conditions (the contract suite covers it).
    st.lists(
        st.one_of(
            puts(),
            updates(),
            st.builds(Delete, keys(), conditions()),
            st.builds(Check, keys(), conditions()),
        ),
        min_size=1,
        max_size=3,
        unique_by=_action_key,
    ),
)


def _space(value: Any, ns: str) -> Any:
    """Prefix every partition value (table and index) so examples never see each other."""
    if isinstance(value, dict):
        return {k: f"{ns}{v}" if k in ("PK", "GSI1PK", "SPK") else v for k, v in value.items()}
    return value


def namespaced(op: Any, ns: str) -> Any:
    if isinstance(op, list):
        return [namespaced(action, ns) for action in op]
    if isinstance(op, Put):
        return Put(_space(op.item, ns), op.conditions)
    if isinstance(op, Update):
        return Update(_space(op.key, ns), _space(dict(op.set), ns), op.remove, op.conditions)
    if isinstance(op, Delete):
        return Delete(_space(op.key, ns), op.conditions)
    if isinstance(op, Check):
        return Check(_space(op.key, ns), op.conditions)
    if isinstance(op, Get):
        return Get(_space(op.key, ns))
    if isinstance(op, BatchGet):
        return BatchGet(tuple(_space(k, ns) for k in op.keys))
    assert isinstance(op, Query)
    return Query(f"{ns}{op.partition}", op.index, op.sort, op.forward, op.limit)


def _without_empty_end(pages: list[Any]) -> list[Any]:
    """The pages, a full last page's LastEvaluatedKey dropped when the page it led to was
    empty: DynamoDB may return one on a page that turns out to be the last (DynamoDB Local
    sometimes looks ahead and does not), and either way the client reads the same items."""
    while len(pages) > 1 and pages[-1] == ([], None):
        pages = [*pages[:-2], (pages[-2][0], None)]
    return pages


async def outcome(store: Store, op: Any) -> Any:
    try:
        if isinstance(op, list):
            return await store.transact_write(op)
        if isinstance(op, Put):
            return await store.put(op)
        if isinstance(op, Update):
            return await store.update(op)
        if isinstance(op, Delete):
            return await store.delete(op)
        if isinstance(op, Get):
            return await store.get(op)
        if isinstance(op, BatchGet):
            found = await store.batch_get(op)
            return sorted(found, key=lambda item: (item["PK"], item["SK"]))
        pages = []
        start = None
        while True:
            result = await store.query(
                Query(op.partition, op.index, op.sort, op.forward, op.limit, start)
            )
            pages.append((result.items, result.last_key))
            if result.last_key is None or len(pages) > 10:
                return _without_empty_end(pages)
            start = result.last_key
    except ConditionFailed as exc:
        return ("ConditionFailed", exc.item)
    except TransactionCanceled as exc:
        return ("TransactionCanceled", [(r.code, r.item) for r in exc.reasons])
    except StoreError as exc:
        return (type(exc).__name__,)


@pytest.fixture(scope="module")
def both_stores(
    dynamodb_client: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Store, Store]]:
    embedded = open_store("embedded", TEST_TABLE, tmp_path_factory.mktemp("differential"))
    dynamodb = open_store("dynamodb-local", TEST_TABLE, Path(), dynamodb_client)
    yield embedded, dynamodb
    asyncio.run(drop_store(embedded))
    asyncio.run(drop_store(dynamodb))


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # each step names its plan
)
@given(operations=st.lists(OPERATIONS, min_size=1, max_size=6))
@example(  # a full last page: DynamoDB Local answers it without a LastEvaluatedKey
    operations=[
        Put(item={"PK": "a", "SK": "2"}),
        Query(partition="a", index=None, sort=SortCondition("between", "2", "z"), limit=1),
        Query("a", None, SortCondition("between", "2", "z"), forward=False, limit=1),
    ]
)
def test_both_stores_agree(both_stores: tuple[Store, Store], operations: list[Any]) -> None:
    embedded, dynamodb = both_stores
    ns = f"{next(NAMESPACES)}|"

    async def run() -> None:
        for step, op in enumerate(operations):
            plan = namespaced(op, ns)
            expected = await outcome(dynamodb, plan)
            got = await outcome(embedded, plan)
            assert got == expected, f"step {step}: {plan}"

    asyncio.run(run())

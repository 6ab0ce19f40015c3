"""Contract: conditional writes, updates, deletes and transactions, on both stores."""

from __future__ import annotations

from decimal import Decimal

import pytest

from keygraph.errors import ConditionFailed, TransactionCanceled, ValidationError
from keygraph.plan import (
    BatchGet,
    Check,
    Condition,
    Delete,
    Get,
    Put,
    Update,
    WriteAction,
)
from keygraph.store import Store

NEW = (Condition("not_exists", "PK"),)


def key(sk: str) -> dict[str, str]:
    return {"PK": "w", "SK": sk}


async def test_create_refuses_to_overwrite_and_returns_the_item(store: Store) -> None:
    await store.put(Put({**key("1"), "name": "first"}, NEW))
    with pytest.raises(ConditionFailed) as failed:
        await store.put(Put({**key("1"), "name": "second"}, NEW))
    assert failed.value.item == {**key("1"), "name": "first"}
    assert await store.get(Get(key("1"))) == {**key("1"), "name": "first"}


async def test_condition_on_a_missing_item_fails_without_an_item(store: Store) -> None:
    with pytest.raises(ConditionFailed) as failed:
        await store.delete(Delete(key("absent"), (Condition("exists", "PK"),)))
    assert failed.value.item is None


async def test_conditions_are_anded(store: Store) -> None:
    await store.put(Put({**key("1"), "version": 3, "owner": "ann"}))
    both = (Condition("equals", "version", 3), Condition("equals", "owner", "bob"))
    with pytest.raises(ConditionFailed):
        await store.update(Update(key("1"), {"version": 4}, conditions=both))
    ok = (Condition("equals", "version", 3), Condition("exists", "owner"))
    updated = await store.update(Update(key("1"), {"version": 4}, conditions=ok))
    assert updated == {**key("1"), "version": 4, "owner": "ann"}


async def test_equals_compares_type_and_value(store: Store) -> None:
    await store.put(Put({**key("1"), "n": 1, "s": "1", "tags": {"a", "b"}, "m": {"x": [1]}}))
    holds = [
        Condition("equals", "n", Decimal("1.0")),
        Condition("equals", "s", "1"),
        Condition("equals", "tags", {"b", "a"}),
        Condition("equals", "m", {"x": [1]}),
    ]
    fails = [
        Condition("equals", "n", "1"),
        Condition("equals", "s", 1),
        Condition("equals", "n", True),
        Condition("equals", "missing", None),
        Condition("not_exists", "n"),
        Condition("exists", "missing"),
    ]
    for condition in holds:
        await store.put(
            Put({**key("1"), "n": 1, "s": "1", "tags": {"a", "b"}, "m": {"x": [1]}}, (condition,))
        )
    for condition in fails:
        with pytest.raises(ConditionFailed):
            await store.delete(Delete(key("1"), (condition,)))
    assert await store.get(Get(key("1"))) is not None


async def test_less_than_compares_numbers_and_strings_of_its_type(store: Store) -> None:
    await store.put(Put({**key("1"), "n": 9, "s": "b", "tags": {"a"}}))
    holds = [
        Condition("less_than", "n", 10),
        Condition("less_than", "n", Decimal("9.5")),
        Condition("less_than", "s", "c"),
        Condition("less_than", "s", "ba"),
    ]
    fails = [
        Condition("less_than", "n", 9),
        Condition("less_than", "n", -1),
        Condition("less_than", "n", "10"),
        Condition("less_than", "s", "b"),
        Condition("less_than", "s", 1),
        Condition("less_than", "missing", 1),
        Condition("less_than", "tags", "b"),
    ]
    for condition in holds:
        await store.update(Update(key("1"), add={"n": 0}, conditions=(condition,)))
    for condition in fails:
        with pytest.raises(ConditionFailed):
            await store.update(Update(key("1"), add={"n": 1}, conditions=(condition,)))
    counter = (Condition("less_than", "n", 11),)
    await store.transact_write([Update(key("1"), add={"n": 1}, conditions=counter)])
    await store.transact_write([Update(key("1"), add={"n": 1}, conditions=counter)])
    with pytest.raises(TransactionCanceled):
        await store.transact_write([Update(key("1"), add={"n": 1}, conditions=counter)])
    assert (await store.get(Get(key("1"))) or {})["n"] == 11


async def test_update_creates_sets_removes_and_returns_the_new_item(store: Store) -> None:
    created = await store.update(Update(key("u"), {"a": 1, "b": "x"}))
    assert created == {**key("u"), "a": 1, "b": "x"}
    changed = await store.update(Update(key("u"), {"a": 2, "c": None}, remove=("b", "zz")))
    assert changed == {**key("u"), "a": 2, "c": None}
    assert await store.get(Get(key("u"))) == changed
    bare = await store.update(Update(key("bare")))
    assert bare == key("bare")


async def test_update_adds_to_numbers(store: Store) -> None:
    created = await store.update(Update(key("n"), {"name": "x"}, add={"count": 2}))
    assert created == {**key("n"), "name": "x", "count": 2}  # absent counts as 0
    added = await store.update(Update(key("n"), add={"count": -5, "other": 1}))
    assert added == {**key("n"), "name": "x", "count": -3, "other": 1}
    with pytest.raises(ValidationError):
        await store.update(Update(key("n"), add={"name": 1}))  # not a number
    with pytest.raises(ValidationError):
        await store.update(Update(key("n"), {"count": 1}, add={"count": 1}))  # overlap
    assert await store.get(Get(key("n"))) == added


async def test_optimistic_locking_with_version(store: Store) -> None:
    await store.put(Put({**key("v"), "version": 1}, NEW))
    expect_1 = (Condition("equals", "version", 1),)
    await store.update(Update(key("v"), {"version": 2}, conditions=expect_1))
    with pytest.raises(ConditionFailed) as failed:
        await store.update(Update(key("v"), {"version": 2}, conditions=expect_1))
    assert failed.value.item == {**key("v"), "version": 2}


async def test_updates_dynamodb_refuses(store: Store) -> None:
    refused = [
        Update(key("u"), {"PK": "other"}),
        Update(key("u"), remove=("SK",)),
        Update(key("u"), {"a": 1}, remove=("a",)),
        Update(key("u"), {"a": 1.5}),
        Update(key("u"), {"GSI1PK": ""}),
        Update(key("u"), {"a": 1}, conditions=(Condition("equals", "a", 0.5),)),
    ]
    for plan in refused:
        with pytest.raises(ValidationError):
            await store.update(plan)
    assert await store.get(Get(key("u"))) is None


async def test_delete(store: Store) -> None:
    await store.put(Put({**key("d"), "v": 1}))
    with pytest.raises(ConditionFailed):
        await store.delete(Delete(key("d"), (Condition("equals", "v", 2),)))
    await store.delete(Delete(key("d"), (Condition("equals", "v", 1),)))
    assert await store.get(Get(key("d"))) is None
    await store.delete(Delete(key("d")))  # deleting nothing is fine


async def test_batch_write_refuses_conditions(store: Store) -> None:
    with pytest.raises(ValidationError):
        await store.batch_write([Put(key("b"), NEW)])
    assert await store.get(Get(key("b"))) is None


async def test_transaction_applies_every_action(store: Store) -> None:
    await store.put(Put({**key("upd"), "n": 1}))
    await store.put(Put({**key("del")}))
    await store.put(Put({**key("chk"), "state": "open"}))
    await store.transact_write(
        [
            Put({**key("new"), "x": "y"}, NEW),
            Update(key("upd"), {"n": 2}, conditions=(Condition("equals", "n", 1),)),
            Delete(key("del"), (Condition("exists", "PK"),)),
            Check(key("chk"), (Condition("equals", "state", "open"),)),
        ]
    )
    keys = tuple(key(s) for s in ("new", "upd", "del", "chk"))
    got = {item["SK"]: item for item in await store.batch_get(BatchGet(keys))}
    assert got == {
        "new": {**key("new"), "x": "y"},
        "upd": {**key("upd"), "n": 2},
        "chk": {**key("chk"), "state": "open"},
    }


async def test_transaction_is_all_or_nothing_with_reasons(store: Store) -> None:
    await store.put(Put({**key("taken"), "owner": "ann"}))
    await store.put(Put({**key("counter"), "n": 5}))
    actions: list[WriteAction] = [
        Put({**key("fresh")}, NEW),
        Update(key("counter"), {"n": 6}),
        Put({**key("taken"), "owner": "bob"}, NEW),
        Check(key("ghost"), (Condition("exists", "PK"),)),
    ]
    with pytest.raises(TransactionCanceled) as cancelled:
        await store.transact_write(actions)
    reasons = cancelled.value.reasons
    assert [r.code for r in reasons] == [
        "None",
        "None",
        "ConditionalCheckFailed",
        "ConditionalCheckFailed",
    ]
    assert reasons[2].item == {**key("taken"), "owner": "ann"}
    assert reasons[0].item is None
    assert reasons[3].item is None
    assert await store.get(Get(key("fresh"))) is None
    assert await store.get(Get(key("counter"))) == {**key("counter"), "n": 5}


async def test_transaction_limits(store: Store) -> None:
    hundred: list[WriteAction] = [Put({**key(f"t{i:03}"), "i": i}) for i in range(100)]
    await store.transact_write(hundred)
    refused: list[list[WriteAction]] = [
        [Put({**key(f"x{i:03}")}) for i in range(101)],
        [Put({**key("x")}), Update(key("x"), {"a": 1})],
        [],
        [Check(key("x"), ())],
        [Put({**key("x"), "f": 0.5})],
        [Put({**key("x"), "d": "z" * 410_000})],
    ]
    for actions in refused:
        with pytest.raises(ValidationError):
            await store.transact_write(actions)
    assert await store.get(Get(key("x"))) is None
    assert await store.get(Get(key("x000"))) is None
    assert await store.get(Get(key("t099"))) == {**key("t099"), "i": 99}


def weighing(prefix: str, count: int, total: int) -> list[WriteAction]:
    """`count` puts whose items weigh `total` bytes together (an item weighs its names and
    values: PK, "w", SK, the sort key, d, then the padding)."""
    overhead = len("PKwSKd") + len(prefix) + 2
    each, extra = divmod(total, count)
    return [
        Put({**key(f"{prefix}{i:02}"), "d": "z" * (each - overhead + (extra if i == 0 else 0))})
        for i in range(count)
    ]


async def test_transaction_payload_limit(store: Store) -> None:
    limit = 4 * 1024 * 1024
    refused: list[list[WriteAction]] = [
        weighing("a", 11, 11 * 390_000),  # 11 items of 390 KB
        weighing("b", 11, limit + 1),
        # updates weigh their key and what they set
        [*weighing("c", 10, 3_900_000), Update(key("c10"), {"d": "y" * 390_000})],
    ]
    for actions in refused:
        with pytest.raises(ValidationError, match="Transaction payload size cannot exceed 4MB"):
            await store.transact_write(actions)
    for sk in ("a00", "a10", "b00", "c00", "c10"):
        assert await store.get(Get(key(sk))) is None
    exact = weighing("e", 11, limit)
    await store.transact_write(exact)
    assert await store.get(Get(key("e10"))) == exact[10].item  # type: ignore[union-attr]
    # deletes and checks of heavy items weigh nothing
    await store.transact_write(
        [Check(key("e00"), (Condition("exists", "PK"),))]
        + [Delete(key(f"e{i:02}")) for i in range(1, 11)]
    )
    assert await store.get(Get(key("e10"))) is None


async def test_a_transaction_token_writes_once(store: Store) -> None:
    create = [Put({**key("t1"), "n": 1}, NEW), Put({**key("t2"), "n": 1}, NEW)]
    await store.transact_write(create, token="token-1")
    await store.transact_write(create, token="token-1")  # again: no ConditionalCheckFailed
    assert await store.get(Get(key("t1"))) == {**key("t1"), "n": 1}
    other = [Put({**key("t3"), "n": 1}, NEW)]
    with pytest.raises(ValidationError, match="IdempotentParameterMismatch"):
        await store.transact_write(other, token="token-1")
    assert await store.get(Get(key("t3"))) is None
    with pytest.raises(TransactionCanceled):
        await store.transact_write(create, token="token-2")  # a new token: written anew

"""Contract: items round-trip losslessly and the item limits hold, on both stores."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from keygraph import capacity
from keygraph.errors import ValidationError
from keygraph.plan import BatchGet, Delete, Get, Put, Query
from keygraph.store import Store

LIMIT = 400 * 1024


def key(pk: str, sk: str) -> dict[str, str]:
    return {"PK": pk, "SK": sk}


async def test_get_missing_item_is_none(store: Store) -> None:
    assert await store.get(Get(key("nobody", "here"))) is None


async def test_every_value_type_round_trips(store: Store) -> None:
    item: dict[str, Any] = {
        **key("types", "é😀"),
        "text": "héllo wörld 😀",
        "int": 12345678901234567890,
        "negative": -7,
        "decimal": Decimal("3.14159"),
        "tiny": Decimal("0.000001"),
        "yes": True,
        "no": False,
        "nothing": None,
        "blob": b"\x00\xffbinary",
        "list": [1, "two", [Decimal("3.5")], {"four": None}],
        "map": {"nested": {"deeper": ["x", b"y"]}, "n": 0},
        "strings": {"a", "é", "Z"},
        "numbers": {1, Decimal("2.5"), -3},
        "blobs": {b"a", b"\x00"},
        "empty_list": [],
        "empty_map": {},
        "empty_text": "",
    }
    await store.put(Put(item))
    assert await store.get(Get(key("types", "é😀"))) == item


async def test_numbers_come_back_canonical(store: Store) -> None:
    await store.put(Put({**key("n", "1"), "a": Decimal("1.50"), "b": Decimal("0100"), "c": 7}))
    got = await store.get(Get(key("n", "1")))
    assert got is not None
    assert got["a"] == Decimal("1.5")
    assert str(got["a"]) == "1.5"
    assert got["b"] == 100
    assert type(got["c"]) is int


REFUSED_VALUES: list[Any] = [
    1.5,
    [1.0],
    {"f": 0.5},
    {Decimal(1), 2.5},
    set(),
    Decimal("1" * 39),
    Decimal("NaN"),
    "lone \ud800 surrogate",
    {"tags": {"ok", "\udfff"}},
]
"""Floats anywhere, an empty set, more than 38 digits, NaN, strings that are not Unicode."""

BAD_KEYS: list[dict[str, Any]] = [
    {"PK": "", "SK": "x"},
    {"PK": "x", "SK": ""},
    {"PK": "x"},
    {"PK": 1, "SK": "x"},
    {"PK": "p" * 2049, "SK": "x"},
    {"PK": "x", "SK": "s" * 1025},
    {"PK": "x", "SK": "y", "GSI1PK": ""},
    {"PK": "x", "SK": "y", "GSI1PK": 5},
    {"PK": "x\ud800", "SK": "y"},
]
"""Empty, missing, non-string or too long key attributes, on the table or an index."""


async def test_values_dynamodb_refuses(store: Store) -> None:
    for value in REFUSED_VALUES:
        with pytest.raises(ValidationError):
            await store.put(Put({**key("bad", "1"), "v": value}))
    assert await store.get(Get(key("bad", "1"))) is None


async def test_bad_keys_are_refused(store: Store) -> None:
    for item in BAD_KEYS:
        with pytest.raises(ValidationError):
            await store.put(Put(item))
    for bad in ({"PK": "x"}, {"PK": "x", "SK": "y", "other": "z"}):
        with pytest.raises(ValidationError):
            await store.get(Get(bad))


async def test_item_size_limit_is_exact(store: Store) -> None:
    # Size = names + values: "PK" + "b" + "SK" + "1" + "d" + the string's UTF-8 bytes.
    fixed = len("PK") + len("b") + len("SK") + len("1") + len("d")
    await store.put(Put({**key("b", "1"), "d": "x" * (LIMIT - fixed)}))
    with pytest.raises(ValidationError):
        await store.put(Put({**key("b", "1"), "d": "x" * (LIMIT - fixed + 1)}))
    got = await store.get(Get(key("b", "1")))
    assert got is not None
    assert len(got["d"]) == LIMIT - fixed


async def test_item_size_counts_utf8_bytes_and_numbers(store: Store) -> None:
    # "é" is two bytes; 123456 is three digit pairs plus one byte.
    fixed = len("PK") + len("b") + len("SK") + len("2") + len("d") + len("n") + 4
    body = "é" * ((LIMIT - fixed) // 2)
    await store.put(Put({**key("b", "2"), "d": body, "n": 123456}))
    with pytest.raises(ValidationError):
        await store.put(Put({**key("b", "2"), "d": body + "xx", "n": 123456}))


FLOAT_ITEMS: list[dict[str, Any]] = [
    # stored as plain JSON, as JSON with fractions, and as DynamoDB JSON (a nested fraction)
    {**key("floats", "plain"), "lat": 52, "lng": -13, "n": 7},
    {**key("floats", "fractions"), "lat": Decimal("52.5212345"), "lng": Decimal("-0.1"), "n": 7},
    {
        **key("floats", "wire"),
        "lat": Decimal("0.1000000000000000000001"),  # more digits than a float holds
        "lng": Decimal("13.4"),
        "n": Decimal("2.5"),
        "nested": [Decimal("0.5")],
    },
]


async def test_reads_answer_the_numbers_named_in_floats_as_floats(store: Store) -> None:
    for item in FLOAT_ITEMS:
        await store.put(Put(item))
    floats = frozenset({"lat", "lng", "absent"})
    wanted = {
        item["SK"]: {**item, "lat": float(item["lat"]), "lng": float(item["lng"])}
        for item in FLOAT_ITEMS
    }
    keys = tuple(key("floats", sk) for sk in wanted)
    got = [await store.get(Get(k, floats=floats)) for k in keys]
    got += await store.batch_get(BatchGet(keys, floats))
    got += (await store.query(Query("floats", floats=floats))).items
    assert len(got) == 9
    for found in got:
        assert found is not None
        assert found == wanted[found["SK"]]
        assert type(found["lat"]) is float
        assert type(found["lng"]) is float
        assert type(found["n"]) is type(wanted[found["SK"]]["n"])  # not named: as stored
    assert await store.get(Get(key("floats", "wire"))) == FLOAT_ITEMS[2]  # none named


async def test_batch_get_returns_found_items_only(store: Store) -> None:
    for i in range(5):
        await store.put(Put({**key("bg", f"{i}"), "i": i}))
    keys = tuple(key("bg", f"{i}") for i in range(100))
    got = await store.batch_get(BatchGet(keys))
    assert sorted(item["i"] for item in got) == [0, 1, 2, 3, 4]


async def test_batch_get_consumes_half_a_unit_per_4_kb_begun_of_each_item(store: Store) -> None:
    # items of about 10 B, 5 KB and 9 KB: 1, 2 and 3 units begun, halved (eventually consistent)
    for name, filler in (("small", ""), ("five", "x" * 5000), ("nine", "x" * 9000)):
        await store.put(Put({**key("units", name), "f": filler}))
    keys = tuple(key("units", name) for name in ("small", "five", "nine", "missing"))
    with capacity.metering() as meter:
        await store.batch_get(BatchGet(keys))
    assert meter.read_units == 3.0


async def test_batch_get_limits(store: Store) -> None:
    too_many = tuple(key("bg", f"{i}") for i in range(101))
    for keys in (too_many, (key("bg", "1"), key("bg", "1")), ()):
        with pytest.raises(ValidationError):
            await store.batch_get(BatchGet(keys))


async def test_batch_write_puts_and_deletes(store: Store) -> None:
    await store.batch_write([Put({**key("bw", f"{i:02}"), "i": i}) for i in range(25)])
    await store.batch_write(
        [Delete(key("bw", f"{i:02}")) for i in range(20)] + [Put({**key("bw", "new")})]
    )
    keys = (*tuple(key("bw", f"{i:02}") for i in range(25)), key("bw", "new"))
    got = await store.batch_get(BatchGet(keys))
    assert sorted(item["SK"] for item in got) == ["20", "21", "22", "23", "24", "new"]


async def test_batch_write_limits(store: Store) -> None:
    too_many: list[Put | Delete] = [Put(key("bw", f"{i}")) for i in range(26)]
    duplicates: list[Put | Delete] = [Put(key("bw", "1")), Delete(key("bw", "1"))]
    for actions in (too_many, duplicates, []):
        with pytest.raises(ValidationError):
            await store.batch_write(actions)
    assert await store.get(Get(key("bw", "1"))) is None

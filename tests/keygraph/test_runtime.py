"""The runtime copied into generated/: key codec, cursors, page sizes, batched reads."""

from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keygraph import keycodec
from keygraph.cursor import CursorCodec
from keygraph.errors import BadArgument, InvalidCursor
from keygraph.paging import PageSize, get_many, page_of
from keygraph.plan import BatchGet, Item, TableDef
from keygraph.store import Session

AWARE = st.datetimes(timezones=st.just(UTC))


@settings(max_examples=150, deadline=None)
@given(AWARE, AWARE)
def test_datetimes_sort_as_strings_and_round_trip(a: datetime, b: datetime) -> None:
    text_a, text_b = keycodec.format_datetime(a), keycodec.format_datetime(b)
    assert len(text_a) == len("2024-01-02T03:04:05.000006Z")
    assert (text_a < text_b) == (a < b)
    assert keycodec.parse_datetime(text_a) == a


def test_datetimes_keep_four_digit_years_and_normalise_to_utc() -> None:
    assert keycodec.format_datetime(datetime(7, 1, 2, tzinfo=UTC)) == "0007-01-02T00:00:00.000000Z"
    plus_two = timezone(timedelta(hours=2))
    assert (
        keycodec.format_datetime(datetime(2024, 5, 1, 1, 30, tzinfo=plus_two))
        == "2024-04-30T23:30:00.000000Z"
    )
    with pytest.raises(BadArgument):
        keycodec.format_datetime(datetime(2024, 5, 1))


@given(st.text(min_size=1))
def test_escaped_values_hold_no_delimiter_and_round_trip(value: str) -> None:
    escaped = keycodec.escape(value)
    assert keycodec.DELIMITER not in escaped
    assert keycodec.unescape(escaped) == value


def test_empty_key_values_and_ints_out_of_width_are_refused() -> None:
    with pytest.raises(BadArgument):
        keycodec.escape("")
    with pytest.raises(BadArgument):
        keycodec.format_int(1000, 3)
    with pytest.raises(BadArgument):
        keycodec.format_int(-1, 3)
    assert keycodec.format_int(7, 3) == "007"


def test_a_range_must_not_end_before_it_starts() -> None:
    assert keycodec.between("A#1", "A#2", "A#{x}", "A#{y}") == ("A#1", "A#2")
    assert keycodec.between("A#1", "A#1", "A#{x}", "A#{y}") == ("A#1", "A#1")
    # as DynamoDB compares keys: by UTF-8 bytes, the order of code points ("\uffff" first)
    assert keycodec.between("\uffff", "\U0001f600", "{x}", "{y}") == ("\uffff", "\U0001f600")
    with pytest.raises(BadArgument, match=r"^x and n \('A#2#1'.*\) sorts after y \('A#1'"):
        keycodec.between("A#2#1", "A#1", "A#{x}#{n}", "A#{y}")
    with pytest.raises(BadArgument, match=r"^'B' \('B'.*\) sorts after y"):
        keycodec.between("B", "A#1", "B", "A#{y}")


def test_cursor_verifies_only_for_its_tenant_pattern_and_args() -> None:
    codec = CursorCodec(b"0123456789abcdef0123456789abcdef")
    position = {"k": {"PK": "T#acme#USER#1", "SK": "ORDER#x"}}
    cursor = codec.encode("acme", "user_orders", {"user_id": "1"}, position)
    assert codec.decode(cursor, "acme", "user_orders", {"user_id": "1"}) == position
    for tenant, pattern, args in (
        ("globex", "user_orders", {"user_id": "1"}),
        ("acme", "user_groups", {"user_id": "1"}),
        ("acme", "user_orders", {"user_id": "2"}),
    ):
        with pytest.raises(InvalidCursor):
            codec.decode(cursor, tenant, pattern, args)
    body, mac = cursor.split(".")
    edited = ("A" if body[0] != "A" else "B") + body[1:] + "." + mac
    for bad in (edited, "garbage", "", cursor + "x"):
        with pytest.raises(InvalidCursor):
            codec.decode(bad, "acme", "user_orders", {"user_id": "1"})


def test_page_size_bounds() -> None:
    sizes = PageSize(20, 100)
    assert sizes.size(None) == 20
    assert sizes.size(0) == 0
    assert sizes.size(100) == 100
    for bad in (-1, 101):
        with pytest.raises(BadArgument):
            sizes.size(bad)


class _CountingStore:
    """Answers batch gets from a dict, recording each call's keys."""

    def __init__(self, items: dict[tuple[str, str], Item]) -> None:
        self.items = items
        self.calls: list[int] = []

    async def batch_get(self, plan: BatchGet) -> list[Item]:
        assert len(plan.keys) <= 100
        self.calls.append(len(plan.keys))
        found = (self.items.get((key["PK"], key["SK"])) for key in plan.keys)
        return [item for item in found if item is not None][::-1]


async def test_get_many_dedupes_chunks_and_keeps_the_order_asked() -> None:
    table = TableDef(name="t", partition_key="PK", sort_key="SK")
    items = {(f"P{i}", "S"): {"PK": f"P{i}", "SK": "S", "n": i} for i in range(250)}
    store = _CountingStore(items)
    wanted = [{"PK": f"P{i}", "SK": "S"} for i in [*range(249, -1, -1), 3, 3]]
    wanted.append({"PK": "missing", "SK": "S"})
    found = await get_many(store, table, wanted)  # type: ignore[arg-type]
    assert sorted(store.calls) == [51, 100, 100]
    assert [item["n"] if item else None for item in found] == [
        *range(249, -1, -1),
        3,
        3,
        None,
    ]


def test_page_of_gives_every_item_its_cursor_and_pages_past_skipped_items() -> None:
    codec = CursorCodec(b"0123456789abcdef0123456789abcdef")
    session = Session(store=None, cursors=codec)  # type: ignore[arg-type]
    items: list[Item] = [
        {"PK": "p", "SK": f"s{i}", "_type": "X" if i != 2 else "Y"} for i in range(4)
    ]

    def convert(item: Item) -> str | None:
        return item["SK"] if item["_type"] == "X" else None

    def position(cursor: str | None) -> dict[str, str]:
        assert cursor is not None
        return codec.decode(cursor, "acme", "pat", {})["k"]  # type: ignore[no-any-return]

    page = page_of(session, items, 3, convert, ("PK", "SK"), "acme", "pat", {})
    assert page.items == ["s0", "s1"]
    assert [position(page.cursor_after(i))["SK"] for i in range(2)] == ["s0", "s1"]
    assert position(page.cursor)["SK"] == "s2"  # the skipped item, so paging goes on past it
    last = page_of(session, items[:2], 3, convert, ("PK", "SK"), "acme", "pat", {})
    assert last.cursor is None
    assert position(last.cursor_after(1))["SK"] == "s1"


def test_a_page_keeps_only_the_key_values_of_its_items() -> None:
    codec = CursorCodec(b"0123456789abcdef0123456789abcdef")
    session = Session(store=None, cursors=codec)  # type: ignore[arg-type]
    items: list[Item] = [{"PK": "p", "SK": f"s{i}", "body": "x" * 100} for i in range(3)]
    page = page_of(session, items, 2, lambda item: item["SK"], ("PK", "SK"), "acme", "pat", {})
    referrers = [ref for item in items for ref in gc.get_referrers(item) if ref is not items]
    assert referrers == []  # not in the page's cursors: a page held for a request frees them
    assert codec.decode(page.cursor or "", "acme", "pat", {})["k"] == {"PK": "p", "SK": "s1"}


class _SigningCounter(CursorCodec):
    def __init__(self) -> None:
        super().__init__(b"0123456789abcdef0123456789abcdef")
        self.signed = 0

    def encode(self, *args: Any, **kwargs: Any) -> str:
        self.signed += 1
        return super().encode(*args, **kwargs)


def test_page_of_signs_no_cursor_until_one_is_asked_for() -> None:
    codec = _SigningCounter()
    session = Session(store=None, cursors=codec)  # type: ignore[arg-type]
    items: list[Item] = [{"PK": "p", "SK": f"s{i}"} for i in range(4)]
    page = page_of(session, items, 3, lambda item: item["SK"], ("PK", "SK"), "acme", "pat", {})
    assert page.has_next
    assert page.items == ["s0", "s1", "s2"]
    assert codec.signed == 0
    assert page.cursor is not None
    assert codec.signed == 1

"""Fill functions write an object's plain fields in selection order, with placeholders for
the rest, and write nothing when any plain value needs the general completion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from server.graphql.compiled.fill import Plain, compile_fill


@dataclass
class Line:
    sku: Any = "TEA"
    quantity: Any = 2
    price: Any = 1.5
    gift: Any = False
    note: Any = None


KEYS = [
    Plain("sku", attribute="sku", exact=str, nullable=False),
    Plain("__typename", typename="OrderItem"),
    Plain("count", attribute="quantity", exact=int, nullable=False),
    Plain("slow"),
    Plain("price", attribute="price", exact=float, nullable=False),
    Plain("gift", attribute="gift", exact=bool, nullable=False),
    Plain("note", attribute="note", exact=str, nullable=True),
]


def test_plain_fields_are_written_in_order_with_placeholders() -> None:
    fill = compile_fill(KEYS)
    assert fill is not None
    out: dict[str, Any] = {}
    assert fill(Line(), out)
    assert list(out.items()) == [
        ("sku", "TEA"),
        ("__typename", "OrderItem"),
        ("count", 2),
        ("slow", None),
        ("price", 1.5),
        ("gift", False),
        ("note", None),
    ]


@pytest.mark.parametrize(
    "line",
    [
        Line(sku=None),  # null for a non-null field: an error to locate
        Line(quantity=2**31),  # beyond Int's 32 bits
        Line(quantity=True),  # a bool is no Int as it is
        Line(price=float("inf")),
        Line(gift=1),
        Line(note=7),  # to be coerced
    ],
)
def test_a_value_that_is_not_plain_leaves_the_object_to_the_general_completion(
    line: Line,
) -> None:
    fill = compile_fill(KEYS)
    assert fill is not None
    out: dict[str, Any] = {}
    assert not fill(line, out)
    assert out == {}


def test_a_missing_attribute_leaves_the_object_to_the_general_completion() -> None:
    fill = compile_fill([Plain("x", attribute="missing", exact=str)])
    assert fill is not None
    out: dict[str, Any] = {}
    assert not fill(Line(), out)
    assert out == {}


def test_no_fill_without_a_plain_field() -> None:
    assert compile_fill([Plain("a"), Plain("b")]) is None
    assert compile_fill([Plain("c", attribute="class", exact=str)]) is None  # a keyword

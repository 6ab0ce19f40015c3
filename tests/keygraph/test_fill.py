"""Fill functions write an object's plain fields in selection order, with placeholders for
the rest, and write nothing when any plain value needs the general completion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from keygraph.execution.fill import Plain, compile_fill


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


@dataclass
class Order:
    status: Any = "paid"
    lines: Any = None
    first: Any = None


def _line_fill() -> Any:
    fill = compile_fill([Plain("sku", attribute="sku", exact=str, nullable=False)])
    assert fill is not None
    return fill


def test_leaves_coerce_and_objects_and_lists_of_plain_objects_fill_in_one_call() -> None:
    keys = [
        Plain("status", attribute="status", nullable=False, coerce=str.upper),
        Plain("lines", attribute="lines", inner=_line_fill(), inner_class=Line, is_list=True),
        Plain("first", attribute="first", inner=_line_fill(), inner_class=Line),
    ]
    fill = compile_fill(keys)
    assert fill is not None
    out: dict[str, Any] = {}
    assert fill(Order(lines=[Line(), Line(sku="CUP")], first=Line()), out)
    assert out == {
        "status": "PAID",
        "lines": [{"sku": "TEA"}, {"sku": "CUP"}],
        "first": {"sku": "TEA"},
    }
    assert fill(Order(lines=None), out := {})
    assert out == {"status": "PAID", "lines": None, "first": None}  # nullable


@pytest.mark.parametrize(
    "order",
    [
        Order(status=None),  # non-null
        Order(status=7),  # the coercion raises
        Order(lines=[Line(), None]),  # a null item
        Order(lines=[Line(sku=None)]),  # an item that is not plain
        Order(lines=(Line(),)),  # not a list
        Order(lines=[Order()]),  # an item of another class
        Order(first="TEA"),  # not an object of the class
    ],
)
def test_anything_irregular_below_leaves_the_object_to_the_general_completion(
    order: Order,
) -> None:
    keys = [
        Plain("status", attribute="status", nullable=False, coerce=str.upper),
        Plain("lines", attribute="lines", inner=_line_fill(), inner_class=Line, is_list=True),
        Plain("first", attribute="first", inner=_line_fill(), inner_class=Line),
    ]
    fill = compile_fill(keys)
    assert fill is not None
    out: dict[str, Any] = {}
    assert not fill(order, out)
    assert out == {}

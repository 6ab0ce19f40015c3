"""A variable's compiled coercion (keygraph/execution/coercion.py) gives what graphql-core's
`coerce_input_value` gives, value for value, Undefined where that refuses."""

from __future__ import annotations

from typing import Any

from graphql import (
    GraphQLInputObjectType,
    GraphQLNonNull,
    GraphQLSchema,
    build_ast_schema,
    coerce_input_value,
    parse,
)
from graphql.pyutils import Undefined
from hypothesis import given, settings
from hypothesis import strategies as st

from keygraph.execution.coercion import compile_coercion
from tests.api_schema import SCHEMA as API

SCHEMA = build_ast_schema(
    parse(
        """enum Colour { RED GREEN }
           input Line { sku: String! quantity: Int! price: Float note: String tags: [ID!] }
           input Order { user: ID! lines: [Line!]! colour: Colour grid: [[Int]] flag: Boolean }
           input WithDefault { n: Int = 3 }
           input OneOf @oneOf { a: Int b: String }
           type Query { order(o: Order, d: WithDefault, one: OneOf): Int }"""
    )
)


def _input(schema: GraphQLSchema, name: str) -> GraphQLInputObjectType:
    found = schema.type_map[name]
    assert isinstance(found, GraphQLInputObjectType)
    return found


ORDER = GraphQLNonNull(_input(SCHEMA, "Order"))
KEYS = st.sampled_from(
    ["sku", "quantity", "price", "note", "tags", "user", "lines", "colour", "grid", "flag", "x"]
)
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**33), 2**33)
    | st.floats(allow_nan=True)
    | st.sampled_from(["RED", "GREEN", "BLUE", "", "7"])
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=6),
    max_leaves=12,
)
LINE = {"sku": "s", "quantity": 2, "price": 1.5, "tags": ["a", 7]}


def _same(value: Any) -> None:
    coerce = compile_coercion(ORDER)
    assert coerce is not None
    mine, theirs = coerce(value), coerce_input_value(value, ORDER)
    assert (mine is Undefined) == (theirs is Undefined)
    assert mine == theirs


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_any_value_coerces_as_graphql_core_coerces_it(value: Any) -> None:
    _same(value)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=6), st.lists(st.dictionaries(KEYS, VALUES)))
def test_near_orders_coerce_as_graphql_core_coerces_them(
    extra: dict[str, Any], lines: list[dict[str, Any]]
) -> None:
    _same({"user": "u", "lines": [LINE, *lines], **extra})
    _same({"user": "u", "lines": [{**LINE, **line} for line in lines] or LINE})


def test_valid_orders_coerce() -> None:
    order = {"user": 1, "lines": LINE, "colour": "RED", "grid": [[1, None], 2], "flag": None}
    coerce = compile_coercion(ORDER)
    assert coerce is not None
    assert coerce(order) == {
        **order,
        "user": "1",
        "lines": [{**LINE, "tags": ["a", "7"]}],
        "colour": "RED",
        "grid": [[1, None], [2]],
    }
    _same(order)


def test_defaults_and_one_of_are_left_to_graphql_core() -> None:
    assert compile_coercion(_input(SCHEMA, "WithDefault")) is None
    assert compile_coercion(_input(SCHEMA, "OneOf")) is None


def test_the_create_order_input_compiles() -> None:
    type_ = GraphQLNonNull(_input(API, "CreateOrderInput"))
    coerce = compile_coercion(type_)
    assert coerce is not None
    value = {
        "userId": "u",
        "currency": "EUR",
        "items": [{"sku": "s", "name": "n", "quantity": 1, "unitPriceCents": 2}],
    }
    assert coerce(value) == coerce_input_value(value, type_)

"""The compiled argument converters give what Strawberry's `convert_arguments` gives, and
leave to Strawberry what they do not cover."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

import strawberry
from strawberry.types.arguments import convert_arguments

from server.api import build_schema
from server.graphql.compiled.inputs import compile_arguments
from server.settings import Limits


@strawberry.enum
class Colour(Enum):
    RED = "red"
    BLUE = "blue"


@strawberry.input
class Line:
    sku: str
    quantity: int
    note: str | None = None
    tags: list[str] | None = None


@strawberry.input
class Basket:
    owner: strawberry.ID
    colour: Colour
    lines: list[Line]
    extra: Line | None
    counts: list[int] = dataclasses.field(default_factory=list)


@strawberry.type
class Query:
    @strawberry.field
    def basket(self, basket: Basket, limit: int | None = None) -> str:
        return ""

    @strawberry.field
    def by_global_id(self, id: strawberry.relay.GlobalID) -> str:
        return ""

    @strawberry.field
    def maybe(self, value: strawberry.Maybe[int]) -> str:
        return ""


SCHEMA = strawberry.Schema(Query)


def _field(name: str) -> Any:
    definition = SCHEMA.get_type_by_name("Query")
    return next(field for field in definition.fields if field.python_name == name)  # type: ignore[union-attr]


def _strawberry(field: Any, values: dict[str, Any]) -> dict[str, Any]:
    converter = SCHEMA.schema_converter
    return convert_arguments(
        values, field.arguments, scalar_registry=converter.scalar_registry, config=converter.config
    )


def test_inputs_lists_enums_and_absent_values_convert_as_strawberry_converts_them() -> None:
    field = _field("basket")
    convert = compile_arguments(field, SCHEMA._schema)
    assert convert is not None
    cases: list[dict[str, Any]] = [
        {
            "basket": {
                "owner": "x",
                "colour": Colour.RED,
                "lines": [{"sku": "a", "quantity": 1}, {"sku": "b", "quantity": 2, "tags": ["t"]}],
                "extra": None,
                "counts": [1, 2],
            },
            "limit": 3,
        },
        {
            "basket": {
                "owner": "y",
                "colour": Colour.BLUE,
                "lines": [],
                "extra": {"sku": "c", "quantity": 0, "note": None},
            }
        },
        {
            "basket": {"owner": "z", "colour": Colour.BLUE, "lines": [], "extra": None},
            "limit": None,
        },
    ]
    for values in cases:
        compiled, expected = convert(values), _strawberry(field, values)
        assert compiled == expected
        assert type(compiled["basket"]) is Basket
        if "counts" in values["basket"]:  # a list of leaves is copied, as Strawberry copies it
            assert compiled["basket"].counts is not values["basket"]["counts"]


def test_global_ids_and_maybe_are_left_to_strawberry() -> None:
    assert compile_arguments(_field("by_global_id"), SCHEMA._schema) is None
    assert compile_arguments(_field("maybe"), SCHEMA._schema) is None


def test_create_order_input_is_compiled() -> None:
    schema = build_schema(Limits())
    mutation = schema.get_type_by_name("Mutation")
    field = next(f for f in mutation.fields if f.python_name == "create_order")  # type: ignore[union-attr]
    convert = compile_arguments(field, schema._schema)
    assert convert is not None
    values = {
        "input": {
            "userId": "VXNlcjox",
            "currency": "EUR",
            "items": [{"sku": "S", "name": "n", "quantity": 2, "unitPriceCents": 100}],
        }
    }
    converter = schema.schema_converter
    expected = convert_arguments(
        values, field.arguments, scalar_registry=converter.scalar_registry, config=converter.config
    )
    assert convert(values) == expected

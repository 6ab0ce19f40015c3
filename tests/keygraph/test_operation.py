"""The executor `keygraph serve` builds (keygraph/execution/operation.py) runs the operation
graphql-core's `build` would, with the same variables: plain scalar values taken as they
are, and everything else coerced, or refused, by graphql-core."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import build_ast_schema, parse

from keygraph.execution import operation
from keygraph.execution.executor import CompiledExecutor
from keygraph.execution.operation import build_executor
from tests.api_schema import SCHEMA

DOCUMENT = parse(
    """query A($id: ID!, $first: Int, $lat: Float!, $after: String, $cascade: Boolean) {
         user(id: $id) { orders(first: $first, after: $after) { edges { cursor } } }
         shopsNear(lat: $lat, lng: 0, radiusKm: 1) { distanceKm }
         __typename @include(if: $cascade) }
       query B { __typename }"""
)


def _build(
    document: Any, name: str | None, variables: Any, hide_suggestions: bool = False
) -> CompiledExecutor | None:
    return build_executor(
        CompiledExecutor, SCHEMA, document, name, variables, hide_suggestions=hide_suggestions
    )


PLAIN = {"id": "x", "first": 5, "lat": 52.5, "after": "c", "cascade": True}


@pytest.mark.parametrize(
    "variables",
    [
        PLAIN,
        {**PLAIN, "first": None, "after": None, "cascade": None},  # nulls
        {"id": "x", "lat": 1.5},  # the nullable ones left out
        {**PLAIN, "unknown": [1]},  # a variable no operation declares
        {**PLAIN, "id": 7},  # an Int for an ID: coerced to "7"
        {**PLAIN, "lat": 3},  # an Int for a Float: coerced to 3.0
        {**PLAIN, "first": 2**31},  # beyond 32 bits: refused
        {**PLAIN, "first": True},  # a bool is no Int
        {**PLAIN, "lat": float("inf")},
        {**PLAIN, "id": None},  # null for a non-null
        {"lat": 1.5},  # a non-null left out
        None,
    ],
)
def test_variables_are_what_graphql_core_makes_of_them(variables: dict[str, Any] | None) -> None:
    mine = _build(DOCUMENT, "A", variables)
    theirs = CompiledExecutor.build(
        SCHEMA, DOCUMENT, raw_variable_values=variables, operation_name="A"
    )
    if not isinstance(theirs, CompiledExecutor):
        assert mine is None
        return
    assert mine is not None
    assert mine.operation is theirs.operation
    assert mine.variable_values.coerced == theirs.variable_values.coerced
    assert _sources(mine) == _sources(theirs)
    assert type(mine.variable_values.coerced.get("lat")) is float


def _sources(executor: CompiledExecutor) -> dict[str, tuple[Any, ...]]:
    return {
        name: (
            source.signature.name,
            str(source.signature.type),
            source.signature.default,
            source.value,
        )
        for name, source in executor.variable_values.sources.items()
    }


def test_plain_variables_skip_graphql_cores_coercion(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("graphql-core's build was called")

    monkeypatch.setattr(CompiledExecutor, "build", refuse)
    built = _build(DOCUMENT, "A", PLAIN, hide_suggestions=True)
    assert built is not None
    assert built.variable_values.coerced == PLAIN
    assert built.hide_suggestions is True


def test_an_operation_build_would_not_pick_is_left_to_it() -> None:
    assert _build(DOCUMENT, None, PLAIN) is None  # two, no name
    assert _build(DOCUMENT, "C", PLAIN) is None  # no such operation
    built = _build(DOCUMENT, "B", None)
    assert built is not None
    assert built.operation.name is not None
    assert built.operation.name.value == "B"
    assert len(operation._operations) <= operation._KEPT


MUTATION = parse(
    """mutation M($input: CreateOrderInput!, $when: DateTime, $lines: [OrderItemInput!]) {
         createOrder(input: $input) { status }
         a: user(id: "x") { orders(from: $when) { edges { cursor } } }
         b: __typename @skip(if: false) }"""
)
LINE = {"sku": "S", "name": "n", "quantity": 2, "unitPriceCents": 100}
ORDER = {"userId": "u", "currency": "EUR", "items": [LINE, {**LINE, "quantity": 1}]}


@pytest.mark.parametrize(
    "variables",
    [
        {"input": ORDER},
        {"input": ORDER, "when": "2026-11-25T10:00:00Z", "lines": [LINE]},
        {"input": ORDER, "when": None, "lines": None},
        {"input": {**ORDER, "items": LINE}},  # one for a list of one
        {"input": {**ORDER, "items": [{**LINE, "quantity": "2"}]}},  # a string for an Int
        {"input": {**ORDER, "extra": 1}},  # a field the input does not have
        {"input": {**ORDER, "currency": None}},  # null for a non-null field
        {"input": [ORDER]},  # a list for an input object
        {"input": ORDER, "when": "yesterday"},  # not a DateTime
        {"input": None},
        {},
    ],
)
def test_input_variables_are_what_graphql_core_makes_of_them(variables: dict[str, Any]) -> None:
    mine = _build(MUTATION, "M", variables)
    theirs = CompiledExecutor.build(
        SCHEMA, MUTATION, raw_variable_values=variables, operation_name="M"
    )
    if not isinstance(theirs, CompiledExecutor):
        assert mine is None
        return
    assert mine is not None
    assert mine.variable_values.coerced == theirs.variable_values.coerced
    assert _sources(mine) == _sources(theirs)


def test_input_variables_skip_graphql_cores_build(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("graphql-core's build was called")

    monkeypatch.setattr(CompiledExecutor, "build", refuse)
    built = _build(MUTATION, "M", {"input": ORDER, "lines": [LINE]})
    assert built is not None
    assert built.variable_values.coerced["input"]["items"][1]["quantity"] == 1


def test_a_type_nesting_without_bound_is_left_to_build() -> None:
    schema = build_ast_schema(
        parse(
            """input Tree { children: [Tree!] name: String }
               input Flat { names: [[String]] }
               type Query { tree(t: Tree, f: Flat): Int }"""
        )
    )
    document = parse("query Q($t: Tree, $f: Flat) { tree(t: $t, f: $f) }")
    found = operation._find(schema, document, "Q")
    assert found is not None
    coerce = {variable.name: variable.coerce for variable in found.variables}
    assert coerce["t"] is None
    assert coerce["f"] is not None

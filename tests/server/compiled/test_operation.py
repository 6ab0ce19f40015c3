"""The fast path's executor (compiled/operation.py) runs the operation graphql-core's `build`
would, with the same variables: plain scalar values taken as they are, and everything else
coerced, or refused, by graphql-core."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import parse

from server.graphql.compiled import operation
from server.graphql.compiled.executor import CompiledExecutor
from server.graphql.compiled.operation import build_executor
from server.graphql.schema import build_schema
from server.settings import Limits

SCHEMA = build_schema(Limits())._schema
DOCUMENT = parse(
    """query A($id: ID!, $first: Int, $lat: Float!, $after: String, $cascade: Boolean) {
         user(id: $id) { orders(first: $first, after: $after) { edges { cursor } } }
         shopsNear(lat: $lat, lng: 0, radiusKm: 1) { distanceKm }
         __typename @include(if: $cascade) }
       query B { __typename }"""
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
    mine = build_executor(SCHEMA, DOCUMENT, "A", variables, None)
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
    built = build_executor(SCHEMA, DOCUMENT, "A", PLAIN, {"trace": 1})
    assert built is not None
    assert built.variable_values.coerced == PLAIN
    assert built.operation_extensions == {"trace": 1}


def test_an_operation_build_would_not_pick_is_left_to_it() -> None:
    assert build_executor(SCHEMA, DOCUMENT, None, PLAIN, None) is None  # two, no name
    assert build_executor(SCHEMA, DOCUMENT, "C", PLAIN, None) is None  # no such operation
    built = build_executor(SCHEMA, DOCUMENT, "B", None, None)
    assert built is not None
    assert built.operation.name is not None
    assert built.operation.name.value == "B"
    assert len(operation._operations) <= operation._KEPT

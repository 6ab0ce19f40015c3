"""The scalars a generated API uses besides GraphQL's own: DateTime (ISO 8601 with its zone),
Date (ISO 8601) and Long (an integer beyond 32 bits, as a JSON number)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from graphql import GraphQLError, GraphQLScalarType, GraphQLSchema, IntValueNode, StringValueNode

LONG_BITS = 63
"""A Long is a signed 64-bit integer, as DynamoDB numbers used as keys and counts are."""


def _datetime(value: Any) -> datetime:
    if not isinstance(value, str):
        raise GraphQLError(f"a DateTime is an ISO 8601 string, not {value!r}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise GraphQLError(f"not an ISO 8601 date and time: {value!r}") from exc
    if parsed.tzinfo is None:
        raise GraphQLError(f"a DateTime needs its zone offset: {value!r}")
    return parsed


def _date(value: Any) -> date:
    if not isinstance(value, str):
        raise GraphQLError(f"a Date is an ISO 8601 string, not {value!r}")
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise GraphQLError(f"not an ISO 8601 date: {value!r}") from exc


def _long(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise GraphQLError(f"a Long is an integer, not {value!r}")
    if not -(2**LONG_BITS) <= value < 2**LONG_BITS:
        raise GraphQLError(f"a Long is within 64 bits, not {value}")
    return value


def _iso(value: Any) -> str:
    return str(value.isoformat())


def _literal(parse: Callable[[Any], Any], node_type: type) -> Callable[..., Any]:
    def parse_literal(node: Any, _variables: Any = None) -> Any:
        if isinstance(node, IntValueNode) and node_type is IntValueNode:
            return parse(int(node.value))
        if isinstance(node, StringValueNode) and node_type is StringValueNode:
            return parse(node.value)
        raise GraphQLError("a literal of the wrong kind")

    return parse_literal


_BEHAVIOUR: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any], type]] = {
    "DateTime": (_iso, _datetime, StringValueNode),
    "Date": (_iso, _date, StringValueNode),
    "Long": (_long, _long, IntValueNode),
}


def install(schema: GraphQLSchema) -> None:
    """Gives the schema's custom scalars their serialization and parsing (`parse_value`
    too, so that a copy of the schema, extend_schema's, keeps them)."""
    for name, (serialize, parse, node_type) in _BEHAVIOUR.items():
        scalar = schema.type_map.get(name)
        if isinstance(scalar, GraphQLScalarType):
            scalar.coerce_output_value = serialize
            scalar.coerce_input_value = parse
            scalar.parse_value = parse  # type: ignore[method-assign,assignment]
            scalar.parse_literal = _literal(parse, node_type)  # type: ignore[method-assign]

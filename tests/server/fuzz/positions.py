"""Every place in the schema a client puts a value, found by walking graphql-core's schema:
each argument of each field reachable from Query or Mutation, and inside an input-object
argument each field and list element, down to the scalars. For each place, an operation
that sends a given value there, with valid values everywhere else, either as one variable
for the whole argument or as an inline literal."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    Undefined,
    get_named_type,
    is_leaf_type,
)

from server.api import build_schema
from server.graphql.ids import from_global_id
from server.settings import Limits

SCHEMA: GraphQLSchema = build_schema(Limits())._schema


class EnumName(str):
    """An enum value: bare in a literal, a string in JSON variables."""


class Missing:
    """No value at all: the argument or input field is left out."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = Missing()
Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Position:
    """One place a value goes: `inner` inside argument `argument` of the last field of
    `steps` (the fields from the root to it)."""

    operation: str
    steps: tuple[str, ...]
    argument: str
    argument_type: GraphQLInputType = field(compare=False)
    inner: Path
    type: GraphQLInputType = field(compare=False)

    def __str__(self) -> str:
        where = ".".join(self.steps)
        inner = "".join(f".{part}" for part in self.inner)
        return f"{self.operation} {where}({self.argument}{inner}: {self.type})"


def node_types() -> list[str]:
    """The names of the types implementing Node, longest first."""
    node = SCHEMA.type_map["Node"]
    assert isinstance(node, GraphQLInterfaceType)
    names = [t.name for t in SCHEMA.get_implementations(node).objects]
    return sorted(names, key=len, reverse=True)


def _paths_to_types() -> dict[str, tuple[str, ...]]:
    """The shortest path of fields from Query to every object type reachable from it."""
    assert SCHEMA.query_type is not None
    paths: dict[str, tuple[str, ...]] = {SCHEMA.query_type.name: ()}
    frontier = [SCHEMA.query_type]
    while frontier:
        following: list[GraphQLObjectType] = []
        for parent in frontier:
            for name, found in sorted(parent.fields.items()):
                named = get_named_type(found.type)
                if not isinstance(named, GraphQLObjectType) or named.name in paths:
                    continue
                paths[named.name] = (*paths[parent.name], name)
                following.append(named)
        frontier = following
    return paths


def positions() -> list[Position]:
    """Every place in the schema a client puts a value."""
    found: list[Position] = []
    assert SCHEMA.mutation_type is not None
    roots: list[tuple[str, GraphQLObjectType, tuple[str, ...]]]
    roots = [("mutation", SCHEMA.mutation_type, ())]
    roots += [("query", t, steps) for t, steps in _reachable_with_arguments()]
    for operation, parent, steps in roots:
        for name, owner in sorted(parent.fields.items()):
            for argument, spec in sorted(owner.args.items()):
                here = (*steps, name)
                for inner, kind in _inner(spec.type, ()):
                    found.append(Position(operation, here, argument, spec.type, inner, kind))
    return found


def _reachable_with_arguments() -> Iterator[tuple[GraphQLObjectType, tuple[str, ...]]]:
    for type_name, steps in sorted(_paths_to_types().items(), key=lambda pair: len(pair[1])):
        named = SCHEMA.type_map[type_name]
        assert isinstance(named, GraphQLObjectType)
        if any(found.args for found in named.fields.values()):
            yield named, steps


def _inner(kind: GraphQLInputType, at: Path) -> Iterator[tuple[Path, GraphQLInputType]]:
    yield at, kind
    nullable = kind.of_type if isinstance(kind, GraphQLNonNull) else kind
    if isinstance(nullable, GraphQLList):
        yield from _inner(nullable.of_type, (*at, 0))
    elif isinstance(nullable, GraphQLInputObjectType):
        for name, spec in sorted(nullable.fields.items()):
            yield from _inner(spec.type, (*at, name))


class Baseline:
    """Valid values for every argument: real ids of the right type from the fuzzed tenant,
    fresh emails (so creates succeed), and the simplest value of every other type."""

    def __init__(self, ids: list[str]) -> None:
        self.ids: dict[str, list[str]] = {}
        for global_id in ids:
            self.ids.setdefault(from_global_id(global_id)[0], []).append(global_id)
        self.fresh = itertools.count()
        self.nodes = node_types()

    def id_for(self, hint: str, owner: str) -> str:
        """A real id for argument `hint` of field `owner` (userId: a User's; otherwise the
        type the field is named for)."""
        if hint.endswith("Id") and hint[:-2].capitalize() in self.ids:
            return self.ids[hint[:-2].capitalize()][0]
        for name in self.nodes:
            if name.lower() in owner.lower() and name in self.ids:
                return self.ids[name][0]
        return next(iter(self.ids.values()))[0]

    def value(self, kind: GraphQLInputType, hint: str, owner: str) -> Any:
        """A valid value of `kind`; MISSING for an optional one (it is left out)."""
        if not isinstance(kind, GraphQLNonNull):
            return MISSING
        inner = kind.of_type
        if isinstance(inner, GraphQLList):
            element = inner.of_type
            if not isinstance(element, GraphQLNonNull):
                element = GraphQLNonNull(element)
            return [self.value(element, hint, owner)]
        if isinstance(inner, GraphQLInputObjectType):
            value = {}
            for name, spec in inner.fields.items():
                if spec.default_value is not Undefined or not isinstance(spec.type, GraphQLNonNull):
                    continue
                value[name] = self.value(spec.type, name, owner)
            return value
        if isinstance(inner, GraphQLEnumType):
            return EnumName(next(iter(inner.values)))
        assert isinstance(inner, GraphQLScalarType)
        return self._scalar(inner.name, hint, owner)

    def _scalar(self, scalar: str, hint: str, owner: str) -> Any:
        if scalar == "ID":
            return self.id_for(hint, owner)
        if scalar == "Int":
            return 1
        if scalar == "Float":
            return 1.0
        if scalar == "Boolean":
            return False
        if scalar == "DateTime":
            return "2025-03-01T00:00:00+00:00"
        lower = hint.lower()
        if "email" in lower:
            return f"fuzz{next(self.fresh)}@example.com"
        if lower == "country":
            return "DE"
        if lower == "currency":
            return "EUR"
        return "fuzz"


def place(value: Any, at: Path, new: Any) -> Any:
    """`value` with `new` at path `at` (MISSING removes it), as a fresh copy."""
    if not at:
        return new
    head, rest = at[0], at[1:]
    if isinstance(head, int):
        items = list(value) if isinstance(value, list) else []
        while len(items) <= head:
            items.append(MISSING)
        items[head] = place(items[head], rest, new)
        return [item for item in items if item is not MISSING]
    fields = dict(value) if isinstance(value, dict) else {}
    fields[head] = place(fields.get(head, MISSING), rest, new)
    return {name: inner for name, inner in fields.items() if inner is not MISSING}


def pick(value: Any, at: Path) -> Any:
    """The part of `value` at path `at`; MISSING when there is none."""
    for part in at:
        if isinstance(part, int):
            if not isinstance(value, list) or len(value) <= part:
                return MISSING
        elif not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def literal(value: Any) -> str:
    """`value` written as a GraphQL literal."""
    if value is None:
        return "null"
    if isinstance(value, EnumName):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{name}: {literal(inner)}" for name, inner in value.items()) + "}"
    raise TypeError(f"no literal for {value!r}")


def selection(kind: GraphQLNamedType, depth: int = 2) -> str:
    """Every field of `kind` that needs no argument: scalars, and objects `depth` deep
    (a connection's nodes at 2)."""
    if is_leaf_type(kind):
        return ""
    assert isinstance(kind, GraphQLObjectType | GraphQLInterfaceType)
    parts = ["__typename"]
    for name, spec in kind.fields.items():
        if any(isinstance(arg.type, GraphQLNonNull) for arg in spec.args.values()):
            continue
        named = get_named_type(spec.type)
        if is_leaf_type(named):
            parts.append(name)
        elif depth > 0 and not spec.args:
            parts.append(f"{name} {selection(named, depth - 1)}")
    return "{ " + " ".join(parts) + " }"


def operation(
    position: Position, baseline: Baseline, value: Callable[[Any], Any], as_variable: bool
) -> tuple[str, dict[str, Any]]:
    """The document and variables that send `value(the valid value there)` to `position`,
    as one variable for the whole argument or inline."""
    valid = baseline.value(position.argument_type, position.argument, position.steps[-1])
    argument_value = place(valid, position.inner, value(pick(valid, position.inner)))
    parent: GraphQLNamedType | None = (
        SCHEMA.query_type if position.operation == "query" else SCHEMA.mutation_type
    )
    variables: dict[str, Any] = {}
    declared = ""
    opened: list[str] = []
    for index, step in enumerate(position.steps):
        assert isinstance(parent, GraphQLObjectType | GraphQLInterfaceType)
        spec = parent.fields[step]
        arguments = {name: baseline.value(arg.type, name, step) for name, arg in spec.args.items()}
        if index == len(position.steps) - 1:
            if as_variable:
                arguments[position.argument] = _Variable("v")
                declared = f"($v: {position.argument_type})"
                if argument_value is not MISSING:
                    variables["v"] = argument_value
            else:
                arguments[position.argument] = argument_value
        written = ", ".join(
            f"{name}: {inner if isinstance(inner, _Variable) else literal(inner)}"
            for name, inner in arguments.items()
            if inner is not MISSING
        )
        opened.append(f"{step}({written})" if written else step)
        parent = get_named_type(spec.type)
    assert parent is not None
    body = selection(parent)
    for part in reversed(opened):
        body = f"{{ {part} {body} }}"
    return f"{position.operation} Fuzz{declared} {body}", variables


class _Variable(str):
    """A variable reference in an argument list."""

    def __str__(self) -> str:
        return f"${str.__str__(self)}"

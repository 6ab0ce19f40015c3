"""A variable's value coerced by a function compiled once per input type, as graphql-core's
`coerce_input_value` coerces it (Undefined when it does not coerce), without looking the
type's kind and fields up again at every value: lists, input objects whose fields have no
defaults (and are not @oneOf), and leaves through their own `coerce_input_value`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import (
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
)
from graphql.pyutils import Undefined, is_iterable
from graphql.type import is_leaf_type

Coerce = Callable[[Any], Any]


def compile_coercion(type_: GraphQLInputType) -> Coerce | None:
    """The type's coercion, or None when it has what this does not compile (a field's
    default, @oneOf); the caller keeps its types from nesting without bound."""
    if isinstance(type_, GraphQLNonNull):
        return _non_null(type_.of_type)
    if isinstance(type_, GraphQLList):
        return _list(type_.of_type)
    if isinstance(type_, GraphQLInputObjectType):
        return _object(type_)
    if is_leaf_type(type_):
        return _leaf(type_.coerce_input_value)
    return None


def _non_null(of_type: GraphQLInputType) -> Coerce | None:
    inner = compile_coercion(of_type)
    if inner is None:
        return None

    def non_null(value: Any) -> Any:
        if value is None or value is Undefined:
            return Undefined
        return inner(value)

    return non_null


def _list(of_type: GraphQLInputType) -> Coerce | None:
    item = compile_coercion(of_type)
    if item is None:
        return None

    def coerce_list(value: Any) -> Any:
        if value is None or value is Undefined:
            return None
        if not is_iterable(value):  # a value for a list is a list of one
            coerced = item(value)
            return Undefined if coerced is Undefined else [coerced]
        found = []
        for element in value:
            coerced = item(element)
            if coerced is Undefined:
                return Undefined
            found.append(coerced)
        return found

    return coerce_list


def _object(type_: GraphQLInputObjectType) -> Coerce | None:
    if type_.is_one_of:
        return None
    fields: list[tuple[str, str, Coerce, bool]] = []
    for name, field in type_.fields.items():
        if field.default is not None or field.default_value is not Undefined:
            return None
        coerce = compile_coercion(field.type)
        if coerce is None:
            return None
        required = isinstance(field.type, GraphQLNonNull)
        fields.append((name, field.out_name or name, coerce, required))
    names = frozenset(type_.fields)
    out_type = type_.out_type

    def coerce_object(value: Any) -> Any:
        if value is None or value is Undefined:
            return None
        if not isinstance(value, dict):
            return Undefined
        for name, given in value.items():
            if given is not Undefined and name not in names:
                return Undefined
        coerced: dict[str, Any] = {}
        for name, out_name, coerce, required in fields:
            given = value.get(name, Undefined)
            if given is Undefined:
                if required:
                    return Undefined
                continue
            found = coerce(given)
            if found is Undefined:
                return Undefined
            coerced[out_name] = found
        return out_type(coerced)

    return coerce_object


def _leaf(coerce_input_value: Coerce) -> Coerce:
    def leaf(value: Any) -> Any:
        if value is None or value is Undefined:
            return None
        try:
            return coerce_input_value(value)
        except Exception:
            return Undefined

    return leaf

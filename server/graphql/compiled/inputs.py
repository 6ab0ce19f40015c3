"""A field's arguments as its resolver takes them, converted from graphql-core's values the
way Strawberry's `convert_arguments` does, by a function compiled once per field plan: input
objects, lists, optionals, enums and scalars. Anything else (Maybe, GlobalID, inputs that
build themselves) is left to Strawberry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING
from typing import Any

from graphql import GraphQLSchema
from strawberry.relay.types import GlobalID
from strawberry.scalars import is_scalar
from strawberry.types.base import (
    StrawberryList,
    StrawberryMaybe,
    StrawberryOptional,
    has_object_definition,
)
from strawberry.types.enum import StrawberryEnumDefinition, has_enum_definition
from strawberry.types.field import StrawberryField
from strawberry.types.lazy_type import LazyType
from strawberry.types.unset import UNSET

Convert = Callable[[Any], Any]
ConvertArguments = Callable[[dict[str, Any]], dict[str, Any]]


def plain_arguments(field: StrawberryField, schema: GraphQLSchema) -> dict[str, str] | None:
    """GraphQL to Python names of the field's arguments when Strawberry would pass each on
    unchanged: scalars (not GlobalID) and enums, optional or not, but not Maybe."""
    converter = schema._strawberry_schema.schema_converter  # type: ignore[attr-defined]
    names = {}
    for argument in field.arguments:
        type_ = argument.type
        if isinstance(type_, StrawberryOptional) and not isinstance(type_, StrawberryMaybe):
            type_ = type_.of_type
        plain = type_ is not GlobalID and (
            is_scalar(type_, converter.scalar_registry)
            or isinstance(type_, StrawberryEnumDefinition)
            or has_enum_definition(type_)
        )
        if not plain or argument.python_name is None:
            return None
        names[converter.config.name_converter.from_argument(argument)] = argument.python_name
    return names


def compile_arguments(field: StrawberryField, schema: GraphQLSchema) -> ConvertArguments | None:
    """The field's argument converter, or None when Strawberry has to convert them."""
    converter = schema._strawberry_schema.schema_converter  # type: ignore[attr-defined]
    compiler = _Compiler(converter.scalar_registry, converter.config)
    arguments: list[tuple[str, str, Convert]] = []
    for argument in field.arguments:
        convert = compiler.convert(argument.type)
        if convert is None or argument.python_name is None:
            return None
        name = converter.config.name_converter.from_argument(argument)
        arguments.append((name, argument.python_name, convert))

    def convert_arguments(values: dict[str, Any]) -> dict[str, Any]:
        return {
            python: convert(values[name]) for name, python, convert in arguments if name in values
        }

    return convert_arguments


def _same(value: Any) -> Any:
    return value


def _copied(value: Any) -> Any:
    """A list of leaves, copied: graphql-core gives the same default list to every request
    that leaves the value out."""
    return value if value is None or value is UNSET else list(value)


class _Compiler:
    def __init__(self, registry: Any, config: Any) -> None:
        self.registry = registry
        self.config = config

    def _is_leaf(self, type_: Any) -> bool:
        if isinstance(type_, LazyType):
            type_ = type_.resolve_type()
        return bool(
            is_scalar(type_, self.registry)
            or isinstance(type_, StrawberryEnumDefinition)
            or has_enum_definition(type_)
        )

    def convert(self, type_: Any) -> Convert | None:
        """The converter of a value of `type_`; None for what Strawberry has to convert."""
        if isinstance(type_, StrawberryMaybe):
            return None
        if isinstance(type_, StrawberryOptional):
            return self.convert(type_.of_type)
        if isinstance(type_, LazyType):
            return self.convert(type_.resolve_type())
        if type_ is GlobalID:
            return None
        if isinstance(type_, StrawberryList):
            return self._list(type_.of_type)
        if self._is_leaf(type_):
            return _same
        if has_object_definition(type_):
            return self._input(type_)
        return None

    def _list(self, inner: Any) -> Convert | None:
        bare = inner.of_type if isinstance(inner, StrawberryOptional) else inner
        if bare is not GlobalID and not isinstance(bare, StrawberryMaybe) and self._is_leaf(bare):
            return _copied
        convert = self.convert(inner)
        if convert is None:
            return None
        each = convert

        def convert_list(value: Any) -> Any:
            if value is None or value is UNSET:
                return value
            return [each(item) for item in value]

        return convert_list

    def _input(self, cls: Any) -> Convert | None:
        definition = cls.__strawberry_definition__
        if definition.from_input is not None or not definition.is_input:
            return None
        defaults = {
            field.python_name: None
            for field in definition.fields
            if field.default_value is MISSING and field.default_factory is MISSING
        }
        fields: list[tuple[str, str, Convert]] = []
        for field in definition.fields:
            convert = self.convert(field.resolve_type(type_definition=definition))
            if convert is None:
                return None
            fields.append(
                (self.config.name_converter.from_field(field), field.python_name, convert)
            )

        def convert_input(value: Any) -> Any:
            if value is None or value is UNSET:
                return value
            kwargs = dict(defaults)
            for name, python, convert in fields:
                if name in value:
                    kwargs[python] = convert(value[name])
            return cls(**kwargs)

        return convert_input

"""The executor of a prepared operation, built without graphql-core's per-request search:
the operation, its fragments and its variables' signatures are found once per document and
operation name, and variables given as plain values of a built-in scalar (an id or string
as str, an Int as a 32-bit int, a Boolean as bool, a Float as a finite float), null or
left out (when nullable, with no default) are taken as they are. Other variables without a
default (an input object, a list, another scalar) are coerced as `build` would coerce them,
by a function compiled for their type (coercion.py) or else graphql-core's
`coerce_input_value`, when their type cannot nest deeper than graphql-core allows. Anything
else (a default, a value that does not coerce, a type that nests without bound) goes
through `build`, which coerces it and reports its errors."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, TypeVar

from graphql import (
    DocumentNode,
    FragmentDefinitionNode,
    GraphQLError,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    GraphQLSchema,
    OperationDefinitionNode,
    coerce_input_value,
)
from graphql.execution import Executor
from graphql.execution.collect_fields import FragmentDetails
from graphql.execution.executor import default_field_resolver, default_type_resolver
from graphql.execution.get_variable_signature import get_variable_signature
from graphql.execution.values import VariableValues, VariableValueSource
from graphql.language.parser import MAX_NESTING_DEPTH
from graphql.pyutils import Undefined

from .coercion import Coerce, compile_coercion
from .plan import EXACT, unchanged

_KEPT = 512
"""Operations remembered, as many as prepared documents (prepare.py)."""


@dataclass(frozen=True, slots=True)
class _Variable:
    name: str
    source: Any
    """Its signature, as graphql-core's VariableValueSource wants it."""
    kind: type | None
    """The Python type of a plain value (None: graphql-core coerces every value)."""
    nullable: bool
    coerce: Coerce | None
    """The coercion of a value of a variable that is not plain and has no default (None:
    `build` coerces it)."""


@dataclass(frozen=True, slots=True)
class _Operation:
    operation: OperationDefinitionNode
    fragment_definitions: dict[str, FragmentDefinitionNode]
    fragments: dict[str, FragmentDetails]
    variables: tuple[_Variable, ...]


_operations: OrderedDict[tuple[int, str | None], tuple[DocumentNode, _Operation | None]]
_operations = OrderedDict()


E = TypeVar("E", bound=Executor[Any])


def build_executor(
    kind: type[E],
    schema: GraphQLSchema,
    document: DocumentNode,
    name: str | None,
    variables: dict[str, Any] | None,
    **custom: Any,
) -> E | None:
    """The executor of the kind for the named operation with these variables, built with
    `custom`'s keywords too (context, is_awaitable, a subclass's own); None when graphql-core
    reports errors for them instead (an unknown operation, variables that do not coerce).
    The caller has bounded the variables' size before."""
    found = _operation(schema, document, name)
    coerced = _plain_variables(found, variables or {}) if found is not None else None
    if found is None or coerced is None:
        built = kind.build(
            schema,
            document,
            raw_variable_values=variables,
            operation_name=name,
            **custom,
        )
        return built if isinstance(built, kind) else None
    return kind(
        schema,
        found.fragment_definitions,
        found.fragments,
        None,
        None,
        found.operation,
        coerced,
        default_field_resolver,
        default_type_resolver,
        default_field_resolver,
        **custom,
    )


def _plain_variables(found: _Operation, raw: dict[str, Any]) -> VariableValues | None:
    """The variables as graphql-core would coerce them, when every one is given as a plain
    value of its scalar; None otherwise."""
    sources: dict[str, Any] = {}
    coerced: dict[str, Any] = {}
    for variable in found.variables:
        value: Any = raw.get(variable.name, Undefined)
        kind = variable.kind
        if kind is None and variable.coerce is None:
            return None
        if variable.nullable and value is Undefined:
            sources[variable.name] = VariableValueSource(variable.source)
            continue
        if variable.nullable and value is None:
            sources[variable.name] = VariableValueSource(variable.source, None)
            coerced[variable.name] = None
            continue
        if kind is None and variable.coerce is not None and value is not Undefined:
            converted = variable.coerce(value)
            if converted is Undefined:
                return None  # `build` reports why
            sources[variable.name] = VariableValueSource(variable.source, value)
            coerced[variable.name] = converted
            continue
        if type(value) is not kind or not unchanged(value):
            return None
        sources[variable.name] = VariableValueSource(variable.source, value)
        coerced[variable.name] = value
    return VariableValues(sources, coerced)


def _operation(
    schema: GraphQLSchema, document: DocumentNode, name: str | None
) -> _Operation | None:
    key = (id(document), name)
    found = _operations.get(key)
    if found is not None and found[0] is document:
        _operations.move_to_end(key)
        return found[1]
    made = _find(schema, document, name)
    _operations[key] = (document, made)
    while len(_operations) > _KEPT:
        _operations.popitem(last=False)
    return made


def _find(schema: GraphQLSchema, document: DocumentNode, name: str | None) -> _Operation | None:
    """The operation `build` would run; None where `build` must decide (no such operation,
    several without a name, fragments with variables of their own)."""
    operations = [
        definition
        for definition in document.definitions
        if isinstance(definition, OperationDefinitionNode)
        and (name is None or (definition.name is not None and definition.name.value == name))
    ]
    definitions = [d for d in document.definitions if isinstance(d, FragmentDefinitionNode)]
    if len(operations) != 1 or any(d.variable_definitions for d in definitions):
        return None
    operation = operations[0]
    variables = []
    for node in operation.variable_definitions or ():
        signature = get_variable_signature(schema, node)
        if isinstance(signature, GraphQLError):
            return None
        type_: Any = signature.type
        nullable = not isinstance(type_, GraphQLNonNull)
        named = type_ if nullable else type_.of_type
        plain = isinstance(named, GraphQLScalarType) and signature.default is None
        kind = EXACT.get(named.name) if plain else None
        bounded = signature.default is None and _depth(type_, set()) <= MAX_NESTING_DEPTH
        coerce = _coercion(type_) if kind is None and bounded else None
        variables.append(_Variable(signature.name, signature, kind, nullable, coerce))
    return _Operation(
        operation,
        {d.name.value: d for d in definitions},
        {d.name.value: FragmentDetails(d) for d in definitions},
        tuple(variables),
    )


def _depth(type_: GraphQLInputType, seen: set[str]) -> float:
    """How deep a value of the type can nest as graphql-core counts it before coercing
    (`input_is_nested_too_deeply`: a list or an input object is a level); infinite for an
    input object that can hold itself."""
    if isinstance(type_, GraphQLNonNull):
        return _depth(type_.of_type, seen)
    if isinstance(type_, GraphQLList):
        return 1 + _depth(type_.of_type, seen)
    if isinstance(type_, GraphQLInputObjectType):
        if type_.name in seen:
            return float("inf")
        inner = seen | {type_.name}
        return 1 + max((_depth(field.type, inner) for field in type_.fields.values()), default=0)
    return 0


def _coercion(type_: GraphQLInputType) -> Coerce:
    """The type's compiled coercion, else graphql-core's."""
    compiled = compile_coercion(type_)
    if compiled is not None:
        return compiled
    return lambda value: coerce_input_value(value, type_)

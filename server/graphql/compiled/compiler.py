"""The compiler of a Strawberry schema: each field's resolver is Strawberry's own function,
called by keyword with what it asks for (self, info, parent, root, its arguments converted
as Strawberry would); a type or field Strawberry did not make, or one with extensions, is
left to Strawberry's executor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from graphql import GraphQLField, GraphQLObjectType
from strawberry.types.field import StrawberryField

from keygraph.execution.calls import literal
from keygraph.execution.plan import Compiler, FieldPlan, Unsupported
from keygraph.execution.subscription import EventCompiler
from server.graphql.answers import ANSWERED_BY
from server.graphql.compiled.arguments import StrawberryCall, field_arguments, resolve_info
from server.graphql.compiled.inputs import compile_arguments, plain_arguments

_BACKREF = "strawberry-definition"


class StrawberryCompiler(Compiler):
    """Compiles operations on a schema Strawberry built."""

    def _origin(self, type_: GraphQLObjectType) -> type | None:
        definition = type_.extensions.get(_BACKREF)
        if definition is None:
            raise Unsupported(f"{type_.name} is no Strawberry type")
        origin = getattr(definition, "origin", None)
        return origin if isinstance(origin, type) else None

    def _bind(self, plan: FieldPlan, definition: GraphQLField) -> None:
        strawberry_field = definition.extensions.get(_BACKREF)
        if not isinstance(strawberry_field, StrawberryField) or strawberry_field.extensions:
            raise Unsupported(
                f"{plan.parent_type.name}.{plan.name} is not a plain Strawberry field"
            )
        resolver = strawberry_field.base_resolver
        if resolver is None:
            plan.attribute = strawberry_field.python_name
            return
        plain = convert = None
        if plan.takes_arguments:
            plain = plain_arguments(strawberry_field, self.schema)
            if plain is None:
                convert = compile_arguments(strawberry_field, self.schema)
            plan.literal_arguments = literal(plan.nodes[0])
            plan.arguments_of = field_arguments
        if plan.leaf and not plan.takes_arguments:
            plan.answer_attribute = strawberry_field.metadata.get(ANSWERED_BY)
        plan.binding = StrawberryCall(strawberry_field, plain, convert)
        plan.resolver = cast(Callable[..., Any], resolver.wrapped_func)
        plan.pass_self = resolver.self_parameter is not None
        plan.info_name = resolver.info_parameter.name if resolver.info_parameter else None
        plan.info_of = resolve_info
        plan.source_names = tuple(
            p.name for p in (resolver.parent_parameter, resolver.root_parameter) if p is not None
        )


class StrawberryEventCompiler(EventCompiler, StrawberryCompiler):
    """Compiles subscription operations on a schema Strawberry built, for their events."""

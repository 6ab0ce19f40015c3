"""What a compiled Strawberry field's resolver is called with besides its source: its
arguments as Python values and, when it asks for one, its Info."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql.execution.values import get_argument_values
from graphql.pyutils import Path
from strawberry.types.arguments import convert_arguments
from strawberry.types.field import StrawberryField

from keygraph.execution.plan import FieldPlan
from server.graphql.compiled.inputs import ConvertArguments


@dataclass(frozen=True, slots=True)
class StrawberryCall:
    """A compiled field's Strawberry field, and how its arguments convert."""

    field: StrawberryField
    plain: dict[str, str] | None
    """GraphQL to Python names of the arguments when its resolver takes each as graphql-core
    gives it (a scalar or enum): None when they convert."""
    convert: ConvertArguments | None
    """Converts other arguments as Strawberry would (inputs.py); None: Strawberry does."""


def field_arguments(executor: Any, field: FieldPlan) -> dict[str, Any]:
    """The field's arguments as its resolver takes them: plain ones as graphql-core gives
    them (literal ones converted once per plan), others by the plan's converter or, where it
    has none, by Strawberry."""
    fixed = field.fixed_arguments
    if fixed is not None:
        return fixed
    call: StrawberryCall = field.binding
    definition = field.parent_type.fields[field.name]
    values = get_argument_values(
        definition, field.nodes[0], executor.variable_values, None, executor.hide_suggestions
    )
    names = call.plain
    if names is not None:
        converted = {names[name]: value for name, value in values.items()}
        if field.literal_arguments:
            field.fixed_arguments = converted
        return converted
    if call.convert is not None:
        return call.convert(values)
    converter = executor.schema._strawberry_schema.schema_converter
    return convert_arguments(
        values,
        call.field.arguments,
        scalar_registry=converter.scalar_registry,
        config=converter.config,
    )


def resolve_info(executor: Any, field: FieldPlan, path: Path) -> Any:
    """The Strawberry Info of one call of the field's resolver."""
    call: StrawberryCall = field.binding
    definition = field.parent_type.fields[field.name]
    raw = executor.build_resolve_info(definition, field.nodes, field.parent_type, path)
    return executor.schema._strawberry_schema.config.info_class(_raw_info=raw, _field=call.field)

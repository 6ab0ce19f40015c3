"""What a compiled field's resolver is called with besides its source: its arguments as
Python values and, when it asks for one, its Info."""

from __future__ import annotations

from typing import Any

from graphql.execution.values import get_argument_values
from graphql.pyutils import Path
from strawberry.types.arguments import convert_arguments

from server.graphql.compiled.plan import FieldPlan


def field_arguments(executor: Any, field: FieldPlan) -> dict[str, Any]:
    """The field's arguments as its resolver takes them: plain ones as graphql-core gives
    them (literal ones converted once per plan), others by the plan's converter or, where it
    has none, by Strawberry."""
    fixed = field.fixed_arguments
    if fixed is not None:
        return fixed
    definition = field.parent_type.fields[field.name]
    values = get_argument_values(
        definition, field.nodes[0], executor.variable_values, None, executor.hide_suggestions
    )
    names = field.plain_arguments
    if names is not None:
        converted = {names[name]: value for name, value in values.items()}
        if field.literal_arguments:
            field.fixed_arguments = converted
        return converted
    if field.convert_arguments is not None:
        return field.convert_arguments(values)
    assert field.strawberry is not None
    converter = executor.schema._strawberry_schema.schema_converter
    return convert_arguments(
        values,
        field.strawberry.arguments,
        scalar_registry=converter.scalar_registry,
        config=converter.config,
    )


def resolve_info(executor: Any, field: FieldPlan, path: Path) -> Any:
    """The Strawberry Info of one call of the field's resolver."""
    definition = field.parent_type.fields[field.name]
    raw = executor.build_resolve_info(definition, field.nodes, field.parent_type, path)
    return executor.schema._strawberry_schema.config.info_class(
        _raw_info=raw, _field=field.strawberry
    )

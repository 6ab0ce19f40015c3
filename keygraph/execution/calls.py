"""How a compiled field is called as graphql-core calls a resolver: its info, and its
arguments as graphql-core gives them, converted once per plan when they hold no variable."""

from __future__ import annotations

from typing import Any, Protocol

from graphql import (
    FieldNode,
    GraphQLObjectType,
    ListValueNode,
    ObjectValueNode,
    ValueNode,
    VariableNode,
)
from graphql.execution.values import get_argument_values
from graphql.pyutils import Path


class Called(Protocol):
    """What these read of a field's plan (plan.FieldPlan)."""

    name: str
    parent_type: GraphQLObjectType
    nodes: list[FieldNode]
    literal_arguments: bool
    fixed_arguments: dict[str, Any] | None


def literal(node: FieldNode) -> bool:
    """Whether the field's arguments hold no variable, at any depth: they convert the same
    for every request."""
    return not any(_uses_variables(argument.value) for argument in node.arguments or ())


def _uses_variables(value: ValueNode) -> bool:
    if isinstance(value, VariableNode):
        return True
    if isinstance(value, ListValueNode):
        return any(_uses_variables(item) for item in value.values)
    if isinstance(value, ObjectValueNode):
        return any(_uses_variables(field.value) for field in value.fields)
    return False


def core_info(executor: Any, field: Called, path: Path) -> Any:
    """The GraphQLResolveInfo graphql-core gives one call of the field's resolver."""
    definition = field.parent_type.fields[field.name]
    return executor.build_resolve_info(definition, field.nodes, field.parent_type, path)


def core_arguments(executor: Any, field: Called) -> dict[str, Any]:
    """The field's arguments as graphql-core gives them (literal ones once per plan)."""
    fixed = field.fixed_arguments
    if fixed is not None:
        return fixed
    definition = field.parent_type.fields[field.name]
    values = get_argument_values(
        definition, field.nodes[0], executor.variable_values, None, executor.hide_suggestions
    )
    if field.literal_arguments:
        field.fixed_arguments = values
    return values

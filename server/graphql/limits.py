"""Every `first` argument's limit, checked once variables are known; the limits both servers
check (characters and tokens, depth, aliases, fields and pairs, the variables' values, the
cost) are the runtime's (keygraph/serve/limits.py, document_size.py).

The search for `first` arguments follows each fragment once, however often it is spread.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValueNode,
    VariableNode,
)


def _firsts(
    selection_set: SelectionSetNode | None,
    fragments: dict[str, FragmentDefinitionNode],
    seen: set[str],
) -> Iterator[ValueNode]:
    """Every `first` argument's value node in a selection set, fragments included once."""
    for selection in selection_set.selections if selection_set else ():
        if isinstance(selection, FieldNode):
            for argument in selection.arguments or ():
                if argument.name.value == "first":
                    yield argument.value
            yield from _firsts(selection.selection_set, fragments, seen)
        elif isinstance(selection, InlineFragmentNode):
            yield from _firsts(selection.selection_set, fragments, seen)
        elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in seen:
            seen.add(selection.name.value)
            fragment = fragments.get(selection.name.value)
            if fragment is not None:
                yield from _firsts(fragment.selection_set, fragments, seen)


FirstArgument = tuple[ValueNode, ValueNode | None]
"""A `first` argument's value node, and the default of its variable when it is one."""


def first_arguments(document: DocumentNode, operation_name: str | None) -> list[FirstArgument]:
    """Every `first` argument of the operation to run (all operations when unnamed)."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    found: list[FirstArgument] = []
    for definition in document.definitions:
        if not isinstance(definition, OperationDefinitionNode):
            continue
        if operation_name is not None and (
            definition.name is None or definition.name.value != operation_name
        ):
            continue
        defaults = {
            variable.variable.name.value: variable.default_value
            for variable in definition.variable_definitions or ()
        }
        for value in _firsts(definition.selection_set, fragments, set()):
            default = defaults.get(value.name.value) if isinstance(value, VariableNode) else None
            found.append((value, default))
    return found


def check_first(arguments: list[FirstArgument], variables: dict[str, Any], max_first: int) -> None:
    """BAD_USER_INPUT when any of the `first` arguments exceeds `max_first`."""
    for value, default in arguments:
        first: Any = value
        if isinstance(value, VariableNode):
            name = value.name.value
            first = variables.get(name, default)
        if isinstance(first, IntValueNode):
            first = int(first.value)
        if isinstance(first, int) and first > max_first:
            raise GraphQLError(
                f"first must be at most {max_first}, got {first}",
                value,
                extensions={"code": "BAD_USER_INPUT"},
            )

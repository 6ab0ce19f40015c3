"""What a field's selection asks for further down, read before its children resolve.

A list can then load its items' fields together, ahead, so that each item's field finds its
data ready. Fragments are followed and @skip/@include honoured; argument values are coerced
as the executor coerces them, so they match what the item's resolver will be given. As the
executor does, each walk follows a fragment once however often it is spread, so it is linear
in the document (and ends on a cycle).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, cast

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLIncludeDirective,
    GraphQLObjectType,
    GraphQLSkipDirective,
    InlineFragmentNode,
    SelectionNode,
)
from graphql.execution.values import (
    VariableValues,
    get_argument_values,
    get_directive_values,
)

from server.graphql.context import Info


def selected(info: Info, path: Sequence[str], type_name: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, arguments) of each field with arguments that the resolving field's selection
    asks for on `type_name` at `path` below it (e.g. ("edges", "node") of a connection), in
    the order written; a field selected twice (aliases) appears twice."""
    raw = info._raw_info
    # Resolvers are given the coerced values alone; only fragment variables need sources.
    variables = VariableValues(sources={}, coerced=cast(dict[str, Any], raw.variable_values))
    owner = raw.schema.get_type(type_name)
    if not isinstance(owner, GraphQLObjectType):
        raise TypeError(f"{type_name} is not an object type of the schema")
    nodes: list[FieldNode] = list(raw.field_nodes)
    for name in path:
        nodes = [
            node for node in _below(nodes, raw.fragments, variables) if node.name.value == name
        ]
    found = []
    for node in _below(nodes, raw.fragments, variables):
        field = owner.fields.get(node.name.value)
        if field is not None and field.args:
            found.append((node.name.value, get_argument_values(field, node, variables)))
    return found


_FIXED_KEPT = 256
"""Selections whose directly selected names are remembered; each entry keeps its document's
nodes alive, so there are fewer than prepared documents kept (prepare.py)."""
_fixed: dict[tuple[int, ...], tuple[list[FieldNode], frozenset[str] | None]] = {}


def selects_any(info: Info, names: Iterable[str]) -> bool:
    """Whether the resolving field's selection asks directly for any of `names`."""
    raw = info._raw_info
    fixed = _fixed_names(raw.field_nodes, raw.fragments)
    if fixed is not None:
        return not fixed.isdisjoint(names)
    variables = VariableValues(sources={}, coerced=cast(dict[str, Any], raw.variable_values))
    wanted = set(names)
    below = _below(raw.field_nodes, raw.fragments, variables)
    return any(node.name.value in wanted for node in below)


def _fixed_names(
    nodes: list[FieldNode], fragments: dict[str, FragmentDefinitionNode]
) -> frozenset[str] | None:
    """The names selected directly below `nodes` when no directive on the way makes them
    depend on variables (None otherwise), remembered by the nodes, which the entry holds
    so that their ids stay theirs."""
    key = tuple(map(id, nodes))
    found = _fixed.get(key)
    if found is None or any(kept is not node for kept, node in zip(found[0], nodes, strict=True)):
        found = (list(nodes), _without_directives(nodes, fragments))
        if len(_fixed) >= _FIXED_KEPT:
            _fixed.clear()
        _fixed[key] = found
    return found[1]


def _without_directives(
    nodes: Iterable[FieldNode], fragments: dict[str, FragmentDefinitionNode]
) -> frozenset[str] | None:
    names: set[str] = set()
    followed: set[str] = set()
    stack: list[SelectionNode] = []
    for node in nodes:
        if node.selection_set is not None:
            stack.extend(node.selection_set.selections)
    while stack:
        selection = stack.pop()
        if selection.directives:
            return None
        if isinstance(selection, FieldNode):
            names.add(selection.name.value)
        elif isinstance(selection, InlineFragmentNode):
            stack.extend(selection.selection_set.selections)
        elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in followed:
            followed.add(selection.name.value)
            fragment = fragments.get(selection.name.value)
            if fragment is not None:
                stack.extend(fragment.selection_set.selections)
    return frozenset(names)


def _below(
    nodes: Iterable[FieldNode],
    fragments: dict[str, FragmentDefinitionNode],
    variables: VariableValues,
) -> Iterator[FieldNode]:
    """The fields selected directly below `nodes`, through fragments, skipping the excluded:
    a fragment spread again is passed over, as the executor collects fields."""
    followed: set[str] = set()
    stack: list[SelectionNode] = []
    for node in reversed(list(nodes)):
        if node.selection_set is not None:
            stack.extend(reversed(node.selection_set.selections))
    while stack:
        selection = stack.pop()
        if not _included(selection, variables):
            continue
        if isinstance(selection, FieldNode):
            yield selection
        elif isinstance(selection, InlineFragmentNode):
            stack.extend(reversed(selection.selection_set.selections))
        elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in followed:
            followed.add(selection.name.value)
            fragment = fragments.get(selection.name.value)
            if fragment is not None:
                stack.extend(reversed(fragment.selection_set.selections))


def _included(node: SelectionNode, variables: VariableValues) -> bool:
    skip = get_directive_values(GraphQLSkipDirective, node, variables)
    if skip is not None and skip["if"] is True:
        return False
    include = get_directive_values(GraphQLIncludeDirective, node, variables)
    return include is None or include["if"] is True

"""Limits checked before execution: characters and tokens (while parsing), the variables'
values and every `first` argument (once variables are known); depth, aliases and fields are
measured in server.graphql.size.

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
    Source,
    ValueNode,
    VariableNode,
    parse,
)
from graphql.error import GraphQLSyntaxError
from graphql.language import Lexer, TokenKind


def too_complex(message: str, node: Any = None) -> GraphQLError:
    """A limit's error: QUERY_TOO_COMPLEX."""
    return GraphQLError(message, node, extensions={"code": "QUERY_TOO_COMPLEX"})


def _count_tokens(query: str, limit: int) -> int:
    """Tokens in the document, counting stops past `limit`; lexing errors are left to
    the parser, which reports them with their location."""
    lexer = Lexer(Source(query))
    count = 0
    try:
        while lexer.advance().kind != TokenKind.EOF:
            count += 1
            if count > limit:
                break
    except GraphQLSyntaxError:
        pass
    return count


def parse_limited(query: str, max_tokens: int, max_length: int) -> DocumentNode:
    """The parsed document; QUERY_TOO_COMPLEX past `max_length` characters (checked first:
    graphql-core lexes in Python, tens of milliseconds per 100,000 characters) or
    `max_tokens` tokens."""
    if len(query) > max_length:
        raise too_complex(f"the document has {len(query)} characters, at most {max_length}")
    if _count_tokens(query, max_tokens) > max_tokens:
        raise too_complex(f"the document has more than {max_tokens} tokens")
    return parse(query, no_location=False)


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


def check_variables(variables: dict[str, Any], max_values: int) -> GraphQLError | None:
    """QUERY_TOO_COMPLEX when the variables hold more than `max_values` values (each list
    item and object field counts; counting stops past the limit): coercing them, twice
    (graphql-core's, then Strawberry's), takes about 50 ms per 5,000."""
    count = 0
    stack: list[Any] = [variables]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            count += len(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            count += len(value)
            stack.extend(value)
        if count > max_values:
            return too_complex(f"the variables hold more than {max_values} values")
    return None


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

"""Limits checked before execution: tokens (while parsing), depth and aliases (as validation
rules), and every `first` argument (once variables are known).

The validation rule class is built once per set of limits and reused, so the cache of
prepared documents (server.prepare), keyed on the rules among others, hits for a repeated
query. Introspection fields (`__schema`, `__type`, ...) do not count towards depth, so GraphiQL's
introspection query passes; the token limit still bounds them.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
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
    ValidationRule,
    ValueNode,
    VariableNode,
    parse,
)
from graphql.error import GraphQLSyntaxError
from graphql.language import Lexer, TokenKind


def _too_complex(message: str, node: Any = None) -> GraphQLError:
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


def parse_limited(query: str, max_tokens: int) -> DocumentNode:
    """The parsed document; QUERY_TOO_COMPLEX past `max_tokens` tokens."""
    if _count_tokens(query, max_tokens) > max_tokens:
        raise _too_complex(f"the document has more than {max_tokens} tokens")
    return parse(query, no_location=False)


class _Walker:
    """Depth and alias count of selection sets, each fragment measured once."""

    def __init__(self, fragments: dict[str, FragmentDefinitionNode]) -> None:
        self._fragments = fragments
        self._memo: dict[str, tuple[int, int]] = {}
        self._active: set[str] = set()

    def measure(self, selection_set: SelectionSetNode | None) -> tuple[int, int]:
        depth, aliases = 0, 0
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, FieldNode):
                inner_depth, inner_aliases = self.measure(selection.selection_set)
                if not selection.name.value.startswith("__"):
                    depth = max(depth, 1 + inner_depth)
                aliases += inner_aliases + (selection.alias is not None)
            elif isinstance(selection, InlineFragmentNode):
                inner_depth, inner_aliases = self.measure(selection.selection_set)
                depth, aliases = max(depth, inner_depth), aliases + inner_aliases
            elif isinstance(selection, FragmentSpreadNode):
                inner_depth, inner_aliases = self._fragment(selection.name.value)
                depth, aliases = max(depth, inner_depth), aliases + inner_aliases
        return depth, aliases

    def _fragment(self, name: str) -> tuple[int, int]:
        if name in self._memo:
            return self._memo[name]
        fragment = self._fragments.get(name)
        if fragment is None or name in self._active:
            return 0, 0  # unknown fragments and cycles are reported by the standard rules
        self._active.add(name)
        self._memo[name] = self.measure(fragment.selection_set)
        self._active.discard(name)
        return self._memo[name]


@cache
def complexity_rule(max_depth: int, max_aliases: int) -> type[ValidationRule]:
    """The validation rule for these limits; the same class for the same limits."""

    class ComplexityRule(ValidationRule):
        def enter_document(self, node: DocumentNode, *_args: Any) -> None:
            fragments = {
                d.name.value: d for d in node.definitions if isinstance(d, FragmentDefinitionNode)
            }
            walker = _Walker(fragments)
            for definition in node.definitions:
                if not isinstance(definition, OperationDefinitionNode):
                    continue
                depth, aliases = walker.measure(definition.selection_set)
                if depth > max_depth:
                    self.report_error(
                        _too_complex(f"the query is {depth} levels deep, at most {max_depth}")
                    )
                if aliases > max_aliases:
                    self.report_error(
                        _too_complex(f"the query uses {aliases} aliases, at most {max_aliases}")
                    )

    return ComplexityRule


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

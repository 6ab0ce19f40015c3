"""What a document selects once its fragments are expanded where they are spread, measured
after parsing and before validation, by `keygraph serve` and the repository's server alike:
each operation's depth, aliases, fields and root fields, and the pairs of same-named fields
that validation compares.

Every walk here takes each fragment once, however often it is spread, so a small document
whose fragments spread others twice is measured (and refused) in time linear in its size.
It runs before validation because validation is what such a document makes slow:
graphql-core's OverlappingFieldsCanBeMerged compares every two fields of one response key
at one place of the response (a few microseconds a pair), recursing into their selections.
Introspection fields (`__schema`, `__type`, ...) do not count towards depth, so GraphiQL's
introspection query passes; the field and pair limits still bound them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple, Protocol

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
)

from .limits import too_complex


class SizeLimits(Protocol):
    """The limits a document's size is checked against (limits.py gives their defaults)."""

    @property
    def max_depth(self) -> int: ...
    @property
    def max_aliases(self) -> int: ...
    @property
    def max_fields(self) -> int: ...
    @property
    def max_pairs(self) -> int: ...


class Size(NamedTuple):
    """What a selection set holds once its fragments are expanded: its depth (introspection
    fields not counted), its aliases and its fields."""

    depth: int
    aliases: int
    fields: int


_EMPTY = Size(0, 0, 0)


class Sizes:
    """The expanded size of a document's selection sets, each fragment measured once, in
    the order of its spreads (its size is then added where it is spread)."""

    def __init__(self, fragments: Mapping[str, FragmentDefinitionNode]) -> None:
        self._memo: dict[str, Size] = {}
        for name in _dependency_order(fragments):
            self._memo[name] = self.measure(fragments[name].selection_set)

    def measure(self, selection_set: SelectionSetNode | None) -> Size:
        depth = aliases = fields = 0
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, FieldNode):
                inner = self.measure(selection.selection_set)
                if not selection.name.value.startswith("__"):
                    depth = max(depth, 1 + inner.depth)
                aliases += inner.aliases + (selection.alias is not None)
                fields += inner.fields + 1
                continue
            if isinstance(selection, InlineFragmentNode):
                inner = self.measure(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                # unknown fragments and cycles count nothing; validation reports them
                inner = self._memo.get(selection.name.value, _EMPTY)
            else:
                continue
            depth = max(depth, inner.depth)
            aliases += inner.aliases
            fields += inner.fields
        return Size(depth, aliases, fields)


def _spreads(selection_set: SelectionSetNode) -> Iterator[str]:
    """The names of the fragments spread in a selection set, at any depth."""
    for selection in selection_set.selections:
        if isinstance(selection, FragmentSpreadNode):
            yield selection.name.value
        elif isinstance(selection, FieldNode | InlineFragmentNode) and selection.selection_set:
            yield from _spreads(selection.selection_set)


def _dependency_order(fragments: Mapping[str, FragmentDefinitionNode]) -> list[str]:
    """The fragments, each after those it spreads; on a cycle, the spread that closes it
    comes first (and counts nothing). Without recursion: a chain of fragments is as long as
    the document allows."""
    order: list[str] = []
    done: dict[str, bool] = {}  # False while its spreads are being ordered
    for root in fragments:
        if root in done:
            continue
        done[root] = False
        stack = [(root, iter(list(_spreads(fragments[root].selection_set))))]
        while stack:
            name, pending = stack[-1]
            for spread in pending:
                if spread in fragments and spread not in done:
                    done[spread] = False
                    stack.append((spread, iter(list(_spreads(fragments[spread].selection_set)))))
                    break
            else:
                stack.pop()
                done[name] = True
                order.append(name)
    return order


def same_key_pairs(
    selection_set: SelectionSetNode, fragments: Mapping[str, FragmentDefinitionNode]
) -> int:
    """Pairs of fields under one response key at one place of the response, summed over
    the places: what OverlappingFieldsCanBeMerged compares. Fields are merged as the executor
    merges them (type conditions aside), each fragment once per place, so the walk visits
    each field at most once per time its fragment is spread (the field limit bounds it)."""
    pairs = 0
    places: list[list[SelectionSetNode]] = [[selection_set]]
    while places:
        sets = places.pop()
        keys: dict[str, list[FieldNode]] = {}
        followed: set[str] = set()
        while sets:
            for selection in sets.pop().selections:
                if isinstance(selection, FieldNode):
                    key = (selection.alias or selection.name).value
                    keys.setdefault(key, []).append(selection)
                elif isinstance(selection, InlineFragmentNode):
                    sets.append(selection.selection_set)
                elif isinstance(selection, FragmentSpreadNode):
                    name = selection.name.value
                    if name not in followed and name in fragments:
                        followed.add(name)
                        sets.append(fragments[name].selection_set)
        for fields in keys.values():
            pairs += len(fields) * (len(fields) - 1) // 2
            below = [field.selection_set for field in fields if field.selection_set is not None]
            if below:
                places.append(below)
    return pairs


def check_size(
    document: DocumentNode, limits: SizeLimits, max_root_fields: int | None = None
) -> list[GraphQLError]:
    """QUERY_TOO_COMPLEX for each limit an operation of the document exceeds: its depth,
    aliases and fields (a fragment's counted each time it is spread), then, within those,
    the pairs of fields under one response key, then its root fields (when
    `max_root_fields` bounds them)."""
    max_depth, max_aliases, max_fields = limits.max_depth, limits.max_aliases, limits.max_fields
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    sizes = Sizes(fragments)
    errors = []
    for definition in document.definitions:
        if not isinstance(definition, OperationDefinitionNode):
            continue
        size = sizes.measure(definition.selection_set)
        if size.depth > max_depth:
            errors.append(
                too_complex(f"the query is {size.depth} levels deep, at most {max_depth}")
            )
        if size.aliases > max_aliases:
            errors.append(
                too_complex(f"the query uses {_count(size.aliases)} aliases, at most {max_aliases}")
            )
        if size.fields > max_fields:
            errors.append(
                too_complex(
                    f"the query selects {_count(size.fields)} fields (a fragment's each time "
                    f"it is spread), at most {max_fields}"
                )
            )
        if errors:
            continue
        pairs = same_key_pairs(definition.selection_set, fragments)
        if pairs > limits.max_pairs:
            errors.append(
                too_complex(
                    f"the query selects {pairs} pairs of fields under one response key "
                    f"at one place, at most {limits.max_pairs}"
                )
            )
        elif max_root_fields is not None:
            roots = root_fields(definition, fragments)
            if roots > max_root_fields:
                message = f"the operation selects {roots} root fields, at most {max_root_fields}"
                errors.append(too_complex(message))
    return errors


def root_fields(
    operation: OperationDefinitionNode, fragments: Mapping[str, FragmentDefinitionNode]
) -> int:
    """The root fields an operation runs: its response keys, fragments followed (fields under
    one key merge into one), introspection's (`__typename`, `__schema`) left out."""
    keys: set[str] = set()
    seen: set[str] = set()
    sets = [operation.selection_set]
    while sets:
        for selection in sets.pop().selections:
            if isinstance(selection, FieldNode):
                if not selection.name.value.startswith("__"):
                    keys.add((selection.alias or selection.name).value)
            elif isinstance(selection, InlineFragmentNode):
                sets.append(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in seen:
                seen.add(selection.name.value)
                fragment = fragments.get(selection.name.value)
                if fragment is not None:
                    sets.append(fragment.selection_set)
    return len(keys)


def _count(number: int) -> str:
    """A count as a message gives it: exponent notation past 15 digits."""
    return str(number) if number < 10**15 else f"{number:.3e}"

"""Look-ahead reads: an extension's field of a generated type may declare the read it will
make from its parent's key (`ahead`, Extension.field). A root field's get by key (and
`node`) starts the look-ahead reads of the fields its selection asks before its own get,
so one read answers them all: the get from the items the look-ahead read (remembered.py),
the field from the same read shared (load_many, query_once), as a node is read with its
ancestors in one batch get, or a user with its addresses in one Query."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from graphql import (
    BooleanValueNode,
    FieldNode,
    FragmentSpreadNode,
    GraphQLObjectType,
    GraphQLResolveInfo,
    InlineFragmentNode,
    SelectionSetNode,
    VariableNode,
)

AHEAD = "keygraph.ahead"
"""The key of an object type's extensions that holds its fields' look-ahead reads."""

Ahead = Callable[..., Awaitable[Any]]
"""A field's look-ahead read: (context, **its parent's key by parameter) -> the read, whose
answer its field reads again, shared; it should read the parent's item too, else the get of
the parent waits for it in vain."""


def declare(owner: GraphQLObjectType, field_name: str, ahead: Ahead) -> None:
    """Notes `ahead` as the look-ahead read of `owner`'s field."""
    aheads = dict((owner.extensions or {}).get(AHEAD, {}))
    aheads[field_name] = ahead
    owner.extensions = {**(owner.extensions or {}), AHEAD: aheads}


async def read_ahead(
    ctx: Any, info: GraphQLResolveInfo[Any], owner: Any, key: Mapping[str, Any]
) -> None:
    """Reads ahead what the fields selected on `owner` (read by `key`) declare, before the
    get of `owner`'s item; a look-ahead that fails is the field's own read to report."""
    aheads: dict[str, Ahead] = (getattr(owner, "extensions", None) or {}).get(AHEAD, {})
    if not aheads:
        return
    variables = info.variable_values.coerced
    selected: set[str] = set()
    for node in info.field_nodes:
        if node.selection_set is not None:
            selected.update(_names(node.selection_set, info.fragments, variables, set()))
    reads = [ahead(ctx, **key) for name, ahead in aheads.items() if name in selected]
    if reads:
        await asyncio.gather(*reads, return_exceptions=True)


def _names(
    selection_set: SelectionSetNode,
    fragments: Mapping[str, Any],
    variables: Mapping[str, Any],
    spread: set[str],
) -> Iterator[str]:
    """The names of the fields a selection set asks, through its fragments, as @skip and
    @include leave them; a fragment's type condition is not asked (at worst, a field of that
    name in another type's fragment reads ahead in vain)."""
    for selection in selection_set.selections:
        if not _included(selection, variables):
            continue
        if isinstance(selection, FieldNode):
            yield selection.name.value
        elif isinstance(selection, InlineFragmentNode):
            yield from _names(selection.selection_set, fragments, variables, spread)
        elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in spread:
            spread.add(selection.name.value)
            fragment = fragments.get(selection.name.value)
            if fragment is not None:
                yield from _names(fragment.selection_set, fragments, variables, spread)


def _included(selection: Any, variables: Mapping[str, Any]) -> bool:
    """Whether @skip and @include keep the selection."""
    for directive in selection.directives or ():
        name = directive.name.value
        if name not in ("skip", "include"):
            continue
        given = next((arg.value for arg in directive.arguments if arg.name.value == "if"), None)
        if isinstance(given, VariableNode):
            value = bool(variables.get(given.name.value))
        else:
            value = isinstance(given, BooleanValueNode) and given.value
        if value == (name == "skip"):
            return False
    return True

"""An extension's Subscription fields: each declared with the spec subscriptions it follows
(`follows`, by their field's name; a pattern's `changes = false` keeps its watch under the
name its field would have), its resolver an async generator that opens them with
`changes(info, after, **follows)` and answers each change in its own shape. The
declaration's guard is asked at subscribe; each followed watch's rule, and the cursor,
decide before anything is read (watches.py)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from graphql import GraphQLField, GraphQLObjectType, GraphQLResolveInfo

from keygraph.realtime.changes import Change, Kind
from keygraph.realtime.follow import FeedLost

from .answers import converted
from .bindings import Watch
from .extension import Declared
from .guards import Check, guard_check
from .watches import Followed, SubscriberTooSlow, event, following, opened

FOLLOWS = "keygraph.follows"
"""The key of an extension's Subscription field's extensions: the watches it follows."""


@dataclass(frozen=True, slots=True)
class Changed:
    """One change an extension's subscription follows: its kind (CREATED, UPDATED or
    DELETED), the item as the write left it (as it was, deleted), the cursor to resume
    after it, and the spec subscription it came by."""

    kind: Kind
    item: Any
    cursor: str
    by: str


def subscribed(
    coordinate: str,
    owner: GraphQLObjectType,
    field: GraphQLField,
    declared: Declared,
    authz: ModuleType | None,
    watches: Mapping[str, Watch],
) -> list[str]:
    """Subscribes an extension's Subscription field by its declaration (`authz`, the
    package's guards; `watches`, what it may follow); the problems that keep it from being
    served."""
    problems: list[str] = []
    check = guard_check(coordinate, owner, field, declared, authz, problems)
    problems += _follow_problems(coordinate, declared, watches)
    if not problems:
        _bind(field, declared, watches, check)
    return problems


def _follow_problems(
    coordinate: str, declared: Declared, watches: Mapping[str, Watch]
) -> list[str]:
    """What keeps the field from following: a bound, nothing followed, or a name no watch
    of the package has."""
    problems = []
    if declared.most is not None or declared.page is not None:
        problems.append(f"{coordinate}: a subscription answers one change at a time; no bound")
    if not declared.follows:
        problems.append(f"{coordinate}: follows no subscription of the spec (give follows=...)")
    problems += [
        f"{coordinate}: follows {name!r}, which is no subscription of the spec"
        for name in declared.follows
        if name not in watches
    ]
    return problems


def _bind(
    field: GraphQLField, declared: Declared, watches: Mapping[str, Watch], check: Check
) -> None:
    """Subscribes the field: `check` first, then its resolver's stream."""
    field.extensions = {
        **(field.extensions or {}),
        FOLLOWS: {name: watches[name] for name in declared.follows},
    }
    stream = declared.resolver

    def subscribe(source: Any, info: GraphQLResolveInfo[Any], **given: Any) -> Any:
        check(source, info, given)
        return stream(source, info, **given)

    field.subscribe = subscribe
    field.resolve = event


def changes(
    info: GraphQLResolveInfo[Any], after: str | None = None, /, **follows: Mapping[str, Any]
) -> AsyncGenerator[Changed]:
    """The changes of the spec subscriptions `follows` names, merged in stream order, each
    change once: each by its field's name, with its key or pattern arguments by parameter
    (`userOrdersChanged={"user_id": "u1"}`). What the stream holds after the cursor
    `after` (one this field's changes gave) is replayed, then live changes follow, of the
    caller's tenant alone. Decided when called, before anything is read: FORBIDDEN for a
    caller a followed pattern's rule refuses, INVALID_CURSOR for a cursor not the
    tenant's; ValueError for a subscription the field's declaration does not follow."""
    coordinate = f"{info.parent_type.name}.{info.field_name}"
    field = info.parent_type.fields[info.field_name]
    declared: dict[str, Watch] = (field.extensions or {}).get(FOLLOWS, {})
    if not follows:
        raise ValueError(f"{coordinate} opens no subscription: name those it follows")
    chosen: list[tuple[str, Followed]] = []
    for name, given in follows.items():
        watch = declared.get(name)
        if watch is None:
            named = ", ".join(declared) or "nothing"
            raise ValueError(f"{coordinate} declares it follows {named}, not {name}")
        values = _values(name, watch, given)
        chosen.append((name, opened(info.context, watch, name, values)))
    streamed = following(info.context, after, [followed for _name, followed in chosen])
    return _changed(streamed, chosen)


def _values(name: str, watch: Watch, given: Mapping[str, Any]) -> dict[str, Any]:
    """The watch's arguments, in its order; TypeError for others than its parameters."""
    params = [arg.param for arg in watch.args]
    if set(given) != set(params):
        raise TypeError(f"{name} takes {', '.join(params) or 'no arguments'}, not {sorted(given)}")
    return {arg.param: converted(arg, given[arg.param]) for arg in watch.args}


async def _changed(
    streamed: AsyncGenerator[tuple[Change, str]], chosen: list[tuple[str, Followed]]
) -> AsyncGenerator[Changed]:
    try:
        async for change, cursor in streamed:
            came = (n for n, (on, shows, _) in chosen if on in change.topics and shows(change))
            by = next(came, chosen[0][0])
            yield Changed(change.kind, change.model, cursor, by)
    except FeedLost as exc:
        raise SubscriberTooSlow(str(exc)) from exc
    finally:
        await streamed.aclose()

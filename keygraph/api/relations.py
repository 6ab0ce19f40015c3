"""Relations answered, batched: a relation's field calls its pattern's function with the
caller's tenant and session, its key arguments from the parent's attributes. A get or batch
get asks its pattern's guard for each key first (null with FORBIDDEN where it refuses),
then loads the key with every other key asked in the same turns of the event loop, through
the request's `Loads`: one call of a batch get for all of a turn's keys of its entity (the
user of every order of a page in one BatchGetItem), or concurrent gets where the spec has no
batch get. A query relation runs one Query a parent, all of a page's parents together, an
identical one (same pattern, key and page arguments) once a request, shared by every parent
and alias asking it; its rule asks only the caller and those arguments. A
relation answers many parents in one call (its `batch`): compiled execution makes a wave's
calls of the field one, without a task per parent; its resolver is that call for one."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterable, Sequence
from datetime import UTC, date, datetime
from functools import partial
from typing import Any, Protocol

from graphql import GraphQLResolveInfo

from keygraph.caller import Caller
from keygraph.errors import Forbidden
from keygraph.page import Page
from keygraph.store import Session

from .answers import arguments, connection, connection_through
from .bindings import Relation
from .loads import Key, Loads, Start, Target

Info = GraphQLResolveInfo[Any]
Batch = Callable[..., Awaitable[list[Any]]]
"""A relation for many parents: (context, parents, **arguments) -> each one's value or
exception, in order."""
_READ = object()
"""A parent's place among a query relation's answers, until its page is read."""


def batch(relation: Relation) -> Batch:
    """The relation's field for many parents at once: each parent's value or exception, in
    order. Compiled execution calls it once for a wave's parents (the field's BATCH
    extension); the field's resolver is it for one parent."""
    if relation.operation == "query":
        return _query(relation, None if relation.via is None else batch(relation.via))
    params = tuple(bound.param for bound in relation.bound)
    if relation.operation == "batch_get":
        return _listed(relation, Target(relation.function, True, params, relation.scoped))
    if relation.batch is not None:
        return _get(relation, Target(relation.batch, True, params, relation.scoped))
    return _get(relation, Target(relation.function, False, params, relation.scoped))


def resolver(many: Batch) -> Callable[..., Any]:
    """The field's resolver: the batch for its one parent."""

    async def resolve(source: Any, info: Info, **given: Any) -> Any:
        (outcome,) = await many(info.context, [source], **given)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    return resolve


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _ask(relation: Relation, caller: Caller | None, keys: list[Key]) -> None:
    """Forbidden unless the pattern's rule lets the caller read each key (a session without
    a caller is the server's own, which rules do not ask about)."""
    guard = relation.guard
    if guard is None or caller is None:
        return
    names = [bound.name for bound in relation.bound]
    for key in keys:
        owners = {owner: key[names.index(owner)] for owner in guard.owners}
        if not guard.function(caller, **owners):
            raise Forbidden(getattr(relation.function, "__name__", "relation"))


async def _loaded(futures: Iterable[asyncio.Future[Any]]) -> None:
    """Once every load is answered; a load shared with other fields is not cancelled with
    this wait."""
    waiting = {future for future in futures if not future.done()}
    if waiting:
        await asyncio.wait(waiting)


class Reading(Protocol):
    """What a relation reads of the request's context (executable.ApiContext)."""

    @property
    def session(self) -> Session: ...

    @property
    def tenant(self) -> str: ...

    @property
    def loads(self) -> Loads: ...


def _get(relation: Relation, target: Target) -> Batch:
    async def many(ctx: Reading, sources: Sequence[Any]) -> list[Any]:
        session, tenant, loads = ctx.session, ctx.tenant, ctx.loads
        asked: list[Any] = []  # a parent's load, or its answer when it needs none
        for source in sources:
            try:
                key = tuple(_hashable(getattr(source, bound.attribute)) for bound in relation.bound)
                if any(value is None for value in key):
                    asked.append(None)
                    continue
                _ask(relation, session.caller, [key])
            except Exception as exc:
                asked.append(exc)
                continue
            asked.append(loads.load(session, tenant, target, key))
        await _loaded(a for a in asked if isinstance(a, asyncio.Future))
        return [_outcome(a) if isinstance(a, asyncio.Future) else a for a in asked]

    return many


def _listed(relation: Relation, target: Target) -> Batch:
    """A batch get's items in its list attribute's order; those missing are left out."""
    (bound,) = relation.bound

    async def many(ctx: Reading, sources: Sequence[Any]) -> list[Any]:
        session, tenant, loads = ctx.session, ctx.tenant, ctx.loads
        asked: list[Any] = []  # a parent's loads, or its answer when it needs none
        for source in sources:
            try:
                refs = getattr(source, bound.attribute)
                if refs is None:
                    asked.append(None)
                    continue
                keys = [(_hashable(ref),) for ref in refs]
                _ask(relation, session.caller, keys)
            except Exception as exc:
                asked.append(exc)
                continue
            asked.append([loads.load(session, tenant, target, key) for key in keys])
        await _loaded(f for a in asked if isinstance(a, list) for f in a)
        return [_items(a) if isinstance(a, list) else a for a in asked]

    return many


def _outcome(future: asyncio.Future[Any]) -> Any:
    """A load's item, or its exception."""
    try:
        return future.result()
    except Exception as exc:
        return exc


def _items(futures: list[asyncio.Future[Any]]) -> Any:
    """The items loaded, in order, those missing left out; the first load's exception if
    any failed."""
    items = []
    for future in futures:
        found = _outcome(future)
        if isinstance(found, Exception):
            return found
        if found is not None:
            items.append(found)
    return items


def _query(relation: Relation, via: Batch | None) -> Batch:
    async def many(ctx: Reading, sources: Sequence[Any], **given: Any) -> list[Any]:
        scope = (ctx.tenant,) if relation.scoped else ()
        first, after = given.get("first"), given.get("after")
        function, bounds = _ranged(relation, given)
        kept = relation.first_page if after is None and not bounds else None
        outcomes: list[Any] = []  # a parent's page, exception or None, or _READ until read
        reads: list[tuple[Hashable | None, Start]] = []
        for source in sources:
            try:
                values = {bound.param: getattr(source, bound.attribute) for bound in relation.bound}
                if any(value is None for value in values.values()):
                    outcomes.append(None)
                    continue
                held = None if kept is None else getattr(source, kept[0])
                if kept is not None and held is not None:  # the first page, with no read
                    outcomes.append(
                        kept[1](ctx.session, *scope, **values, **{kept[0]: held}, first=first)
                    )
                    continue
                extra = arguments(relation.args, given) | bounds
                asked = {**values, **extra, "first": first, "after": after}
                start = partial(function, ctx.session, *scope, **asked)
            except Exception as exc:
                outcomes.append(exc)
                continue
            outcomes.append(_READ)
            reads.append((_identity(function, scope, asked), start))
        read = iter(await ctx.loads.queries(reads, ctx.session.store) if reads else ())
        found = [next(read) if outcome is _READ else outcome for outcome in outcomes]
        if via is None:
            return [_page(page, relation.listed) for page in found]
        return await _through(ctx, via, found, relation.listed)

    return many


_ENDS: dict[str, tuple[Any, Any]] = {
    "DateTime": (datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC)),
    "Date": (date.min, date.max),
}
"""Where a range runs to when a bound is left out: its type's first and last values."""


def _ranged(relation: Relation, given: dict[str, Any]) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The function a query relation runs for the field's arguments, and the bounds it
    takes: its ranged pattern's when a bound is given (the other at its type's end)."""
    if relation.ranged is None:
        return relation.function, {}
    ranged, args = relation.ranged
    values = [given.get(arg.name) for arg in args]
    if all(value is None for value in values):
        return relation.function, {}
    ends = [_ENDS[arg.kind][0 if n == 0 else 1] for n, arg in enumerate(args)]
    filled = [end if value is None else value for value, end in zip(values, ends, strict=True)]
    return ranged, {arg.param: value for arg, value in zip(args, filled, strict=True)}


def _identity(function: Any, scope: tuple[str, ...], asked: dict[str, Any]) -> Hashable | None:
    """What makes a query's read the same as another's in one request: its function and
    every argument, by name (the session is the request's); None when an argument is
    unhashable (a list the page's bounds hold)."""
    identity = (function, scope, tuple(asked), tuple(asked.values()))
    try:
        hash(identity)
    except TypeError:
        return None
    return identity


def _page(found: Any, listed: bool) -> Any:
    """A page as its connection, or its items when `listed`; anything else as it is."""
    if not isinstance(found, Page):
        return found
    return found.items if listed else connection(found)


async def _through(ctx: Reading, via: Batch, found: list[Any], listed: bool) -> list[Any]:
    """Each page as a connection (or list, `listed`) of what `via` answers for its items,
    all pages' items asked at once; anything else (an exception, None) as it is."""
    items = [item for page in found if isinstance(page, Page) for item in page.items]
    nodes = iter(await via(ctx, items)) if items else iter(())
    return [
        _shown(page, [next(nodes) for _ in page.items], listed) if isinstance(page, Page) else page
        for page in found
    ]


def _shown(page: Page[Any], outcomes: list[Any], listed: bool) -> Any:
    """The page as a connection (or list, `listed`) of what a via relation answers for each
    item (None, no edge, for one the caller may not read or gone); the first other
    exception, if any."""
    nodes = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, Forbidden):
            return outcome
        nodes.append(None if isinstance(outcome, Forbidden) else outcome)
    if listed:
        return [node for node in nodes if node is not None]
    return connection_through(page, nodes)


async def load_many(
    ctx: Reading, batch_get: Callable[..., Awaitable[Any]], refs: Sequence[Any], scoped: bool = True
) -> list[Any]:
    """Items by key through a generated batch get, each None where missing, loaded with
    every key the request asks of it in the same turns of the event loop: what an
    extension's field reads so that a page's parents make one call, not one each."""
    target = Target(batch_get, True, (), scoped)
    futures = [ctx.loads.load(ctx.session, ctx.tenant, target, (_hashable(ref),)) for ref in refs]
    return list(await asyncio.gather(*futures))


async def query_once(
    ctx: Reading,
    query: Callable[..., Awaitable[Any]],
    *args: Any,
    scoped: bool = True,
    **kwargs: Any,
) -> Any:
    """A generated query function's answer, read once a request: the same call (same
    function and arguments) made again, or already made by a look-ahead read, shares it;
    what an extension's field reads so that its look-ahead (ahead.py) answers it."""
    scope = (ctx.tenant,) if scoped else ()
    identity = _identity(query, (*scope, *args), kwargs)
    (found,) = await ctx.loads.queries(
        [(identity, partial(query, ctx.session, *scope, *args, **kwargs))]
    )
    if isinstance(found, Exception):
        raise found
    return found

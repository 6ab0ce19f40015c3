"""Relations answered, batched: a relation's field calls its pattern's function with the
caller's tenant and session, its key arguments from the parent's attributes. A get or batch
get asks its pattern's guard for each key first (null with FORBIDDEN where it refuses),
then loads the key with every other key asked in the same turns of the event loop, through
the request's `Loads`: one call of a batch get for all of a turn's keys of its entity (the
user of every order of a page in one BatchGetItem), or concurrent gets where the spec has no
batch get. A query relation runs one Query a parent, all of a page's parents together."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from graphql import GraphQLResolveInfo

from keygraph.caller import Caller
from keygraph.errors import Forbidden
from keygraph.store import Session

from .answers import arguments, connection, connection_through
from .bindings import Relation

Info = GraphQLResolveInfo[Any]
Key = tuple[Any, ...]
R = TypeVar("R")
QUIET = 2
"""The turns of the event loop with no key asked after which a load goes out."""
MAX_TURNS = 16
"""The most turns a load waits for others to join it, reads in flight aside."""


@dataclass(frozen=True, slots=True)
class Target:
    """What loads items by key: a batch get (`batched`: all of a turn's keys in one call,
    each key's parts in `params` order) or a get (one call a key, all sent together)."""

    function: Callable[..., Awaitable[Any]]
    batched: bool
    params: tuple[str, ...]
    scoped: bool


class Loads:
    """One request's loads of items by key, as a DataLoader makes them, waiting for the
    request's reads in flight (`read`): the keys asked go out together once those reads
    are answered and QUIET turns of the event loop pass with no other key asked (at most
    MAX_TURNS), each target's in one dispatch; a key asked again shares its first load."""

    def __init__(self) -> None:
        self._loaded: dict[tuple[Target, Key], asyncio.Future[Any]] = {}
        self._pending: dict[Target, list[Key]] = {}
        self._quiet = 0
        """Turns passed since a key was asked or a read answered."""
        self._turns = -1
        """Turns waited so far; -1 while nothing waits."""
        self._reading = 0
        self._parked = False
        """Whether the wait stopped until the reads in flight are answered."""
        self._tasks: set[asyncio.Future[None]] = set()
        self._session: tuple[Session, str] | None = None

    def load(self, session: Session, tenant: str, target: Target, key: Key) -> asyncio.Future[Any]:
        """The item of `key` (None when there is none), once its dispatch answers."""
        found = self._loaded.get((target, key))
        if found is not None:
            return found
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._loaded[(target, key)] = future
        self._pending.setdefault(target, []).append(key)
        self._quiet = 0
        if self._turns < 0:
            self._turns = 0
            self._session = session, tenant
            loop.call_soon(self._turn)
        return future

    async def read(self, call: Awaitable[R]) -> R:
        """The answer of a read whose items may ask for loads: those waiting go out after
        it, with the keys its items ask for."""
        self._reading += 1
        try:
            return await call
        finally:
            self._reading -= 1
            self._quiet = 0
            if not self._reading and self._parked:
                self._parked, self._turns = False, 0
                asyncio.get_running_loop().call_soon(self._turn)

    def _turn(self) -> None:
        if self._reading:
            self._parked = True
            return
        if self._quiet < QUIET and self._turns < MAX_TURNS:
            self._quiet += 1
            self._turns += 1
            asyncio.get_running_loop().call_soon(self._turn)
            return
        pending, self._pending = self._pending, {}
        self._quiet, self._turns = 0, -1
        assert self._session is not None
        session, tenant = self._session
        for target, keys in pending.items():
            read = self.read(self._dispatch(session, tenant, target, keys))
            task = asyncio.ensure_future(read)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _dispatch(
        self, session: Session, tenant: str, target: Target, keys: list[Key]
    ) -> None:
        futures = [self._loaded[(target, key)] for key in keys]
        try:
            outcomes = await _run(session, tenant, target, keys)
        except Exception as exc:
            outcomes = [exc] * len(keys)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        for future, outcome in zip(futures, outcomes, strict=True):
            if future.done():
                continue
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)


async def _run(session: Session, tenant: str, target: Target, keys: list[Key]) -> Sequence[Any]:
    """Each key's item or exception, in order."""
    scope = (tenant,) if target.scoped else ()
    if target.batched:
        refs = [key[0] if len(key) == 1 else key for key in keys]
        found: list[Any] = await target.function(session, *scope, refs)
        return found
    calls = [
        target.function(session, *scope, **dict(zip(target.params, key, strict=True)))
        for key in keys
    ]
    return await asyncio.gather(*calls, return_exceptions=True)


def resolver(relation: Relation) -> Callable[..., Any]:
    """The resolver of a relation's field."""
    if relation.operation == "query":
        return _query(relation, None if relation.via is None else resolver(relation.via))
    params = tuple(bound.param for bound in relation.bound)
    if relation.operation == "batch_get":
        return _listed(relation, Target(relation.function, True, params, relation.scoped))
    if relation.batch is not None:
        return _get(relation, Target(relation.batch, True, params, relation.scoped))
    return _get(relation, Target(relation.function, False, params, relation.scoped))


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


def _get(relation: Relation, target: Target) -> Callable[..., Any]:
    async def resolve(source: Any, info: Info) -> Any:
        key = tuple(_hashable(getattr(source, bound.attribute)) for bound in relation.bound)
        if any(value is None for value in key):
            return None
        session, tenant = info.context.session, info.context.tenant
        _ask(relation, session.caller, [key])
        return await info.context.loads.load(session, tenant, target, key)

    return resolve


def _listed(relation: Relation, target: Target) -> Callable[..., Any]:
    """A batch get's items in its list attribute's order; those missing are left out."""
    (bound,) = relation.bound

    async def resolve(source: Any, info: Info) -> Any:
        refs = getattr(source, bound.attribute)
        if refs is None:
            return None
        keys = [(_hashable(ref),) for ref in refs]
        session, tenant = info.context.session, info.context.tenant
        _ask(relation, session.caller, keys)
        loads = info.context.loads
        found = await asyncio.gather(*(loads.load(session, tenant, target, key) for key in keys))
        return [item for item in found if item is not None]

    return resolve


def _query(relation: Relation, via: Callable[..., Any] | None) -> Callable[..., Any]:
    async def resolve(source: Any, info: Info, **given: Any) -> Any:
        values = {bound.param: getattr(source, bound.attribute) for bound in relation.bound}
        if any(value is None for value in values.values()):
            return None
        ctx = info.context
        scope = (ctx.tenant,) if relation.scoped else ()
        call = relation.function(
            ctx.session,
            *scope,
            **values,
            **arguments(relation.args, given),
            first=given.get("first"),
            after=given.get("after"),
        )
        page = await ctx.loads.read(call)
        if via is None:
            return page.items if relation.listed else connection(page)
        found = await asyncio.gather(
            *(via(item, info) for item in page.items), return_exceptions=True
        )
        shown = [_kept(outcome) for outcome in found]
        if relation.listed:
            return [node for node in shown if node is not None]
        return connection_through(page, shown)

    return resolve


def _kept(outcome: Any) -> Any:
    """A via relation's answer for one item: None for one the caller may not read."""
    if isinstance(outcome, Forbidden):
        return None
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome

"""A request's loads of items by key, as a DataLoader makes them, and its queries: what its
fields ask in the same turns of the event loop goes out together, in one wave, one call of
a batch get for all of a target's keys (or concurrent gets) beside the queries, an identical
query (same function and arguments) read once. The loads wait for the request's reads in
flight before them to be answered (the keys their items ask join them); the queries, and the
reads they go out with, never wait. What relations (relations.py) and an extension's
`load_many` read through."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

from keygraph.store import Session, Store

Key = tuple[Any, ...]
Start = Callable[[], Awaitable[Any]]
"""Starts a read."""
OneWave = Callable[[], AbstractContextManager[None]]
"""A store's `one_wave` (keygraph/stores/counting.py): its calls made inside, one after
another, count as one wave."""
R = TypeVar("R")
QUIET = 2
"""The turns of the event loop with nothing asked after which what was asked goes out."""
MAX_TURNS = 16
"""The most turns a load or query waits for others to join it, reads in flight aside."""


@dataclass(frozen=True, slots=True)
class Target:
    """What loads items by key: a batch get (`batched`: all of a turn's keys in one call,
    each key's parts in `params` order) or a get (one call a key, all sent together)."""

    function: Callable[..., Awaitable[Any]]
    batched: bool
    params: tuple[str, ...]
    scoped: bool


class Loads:
    """One request's loads of items by key, as a DataLoader makes them, and its queries:
    what is asked goes out once QUIET turns of the event loop pass with nothing else asked
    (at most MAX_TURNS), the queries and each target's keys in one dispatch, all in the same
    turn; the keys wait for the reads in flight then (`read`), not for those they go out
    with or after. A key asked again shares its first load, a query asked again
    (`queries`) its first read. On a store that answers inline the queries of a dispatch
    run one after another in one task and one counted wave, as they would take their turns
    anyway; elsewhere each is a task of its own."""

    def __init__(self) -> None:
        self._loaded: dict[tuple[Target, Key], asyncio.Future[Any]] = {}
        self._queried: dict[Hashable, asyncio.Future[Any]] = {}
        """Each query's answer or exception, by its function and arguments."""
        self._pending: dict[Target, list[Key]] = {}
        self._reads: list[tuple[asyncio.Future[Any], Start, OneWave | None]] = []
        """The queries asked, each with the future of its answer and its store's `one_wave`
        if it answers inline, to start with the keys."""
        self._quiet = 0
        """Turns passed since something was asked or a read answered."""
        self._turns = -1
        """Turns waited so far; -1 while nothing waits."""
        self._reading = 0
        """Reads in flight."""
        self._parked = False
        """Whether the keys asked stopped for the reads then in flight (`_awaited` of them)."""
        self._era = 0
        """Which reads the keys stopped for: those begun before it last changed."""
        self._awaited = 0
        """The reads in flight that the keys stopped for."""
        self._sent: dict[asyncio.Future[Any], tuple[int, asyncio.Task[None] | None]] = {}
        """The queries sent, each with its era and its own task (None for one read in turn),
        in flight until their asker has the answer."""
        self._tasks: set[asyncio.Future[None]] = set()
        self._session: tuple[Session, str] | None = None

    def load(self, session: Session, tenant: str, target: Target, key: Key) -> asyncio.Future[Any]:
        """The item of `key` (None when there is none), once its dispatch answers."""
        found = self._loaded.get((target, key))
        if found is not None:
            return found
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._loaded[(target, key)] = future
        if not self._pending:
            self._session = session, tenant
        self._pending.setdefault(target, []).append(key)
        self._asked()
        return future

    def forget(self) -> None:
        """Drops the items loaded and queries read so far (not those on their way): a
        subscription's next event, or what a mutation's write follows, reads them afresh."""
        self._loaded = {key: found for key, found in self._loaded.items() if not found.done()}
        self._queried = {key: found for key, found in self._queried.items() if not found.done()}

    async def queries(
        self, reads: Sequence[tuple[Hashable | None, Start]], store: Store | None = None
    ) -> list[Any]:
        """Each read's answer or exception, in order: those not read yet in this request sent
        with the loads asked in the same turns (on `store`), an identical read (same
        `Hashable`; None for one never shared) sharing the answer of one asked before or by
        another field."""
        loop = asyncio.get_running_loop()
        one_wave = _one_wave(store)
        futures: list[asyncio.Future[Any]] = []
        own: list[tuple[Hashable | None, asyncio.Future[Any]]] = []
        for key, start in reads:
            found = None if key is None else self._queried.get(key)
            if found is None or found.cancelled():
                found = loop.create_future()
                if key is not None:
                    self._queried[key] = found
                own.append((key, found))
                self._reads.append((found, start, one_wave))
            futures.append(found)
        if own:
            self._asked()
        waiting = {future for future in futures if not future.done()}
        if waiting:
            try:
                await asyncio.wait(waiting)
            except BaseException:
                for key, future in own:  # given up: those sharing it read again
                    if future.cancel() and key is not None and self._queried.get(key) is future:
                        del self._queried[key]
                raise
            finally:  # the loads waiting for these go out with what their answers ask
                for _, future in own:
                    sent = self._sent.pop(future, None)
                    if sent is not None:
                        era, task = sent
                        if task is not None:
                            task.cancel()  # given up, else done already
                        self._answered(era)
        again = [n for n, future in enumerate(futures) if future.cancelled()]
        answers = [None if future.cancelled() else future.result() for future in futures]
        if again:  # another field gave up the read these shared
            read_again = await self.queries([reads[n] for n in again], store)
            for n, answer in zip(again, read_again, strict=True):
                answers[n] = answer
        return answers

    async def read(self, call: Awaitable[R]) -> R:
        """The answer of a read whose items may ask for loads: those waiting for it go out
        after it, with the keys its items ask for."""
        era = self._era
        self._reading += 1
        try:
            return await call
        finally:
            self._answered(era)

    def _answered(self, era: int) -> None:
        """A read of `era` answered: the keys waiting for it go out once the others are."""
        self._reading -= 1
        self._quiet = 0
        if era != self._era:
            self._awaited -= 1
            if not self._awaited and self._turns < 0:
                self._turns = 0
                asyncio.get_running_loop().call_soon(self._turn)

    def _asked(self) -> None:
        """Waits for more to be asked, unless already waiting."""
        self._quiet = 0
        if self._turns < 0:
            self._turns = 0
            asyncio.get_running_loop().call_soon(self._turn)

    def _turn(self) -> None:
        if self._quiet < QUIET and self._turns < MAX_TURNS:
            self._quiet += 1
            self._turns += 1
            asyncio.get_running_loop().call_soon(self._turn)
            return
        self._quiet, self._turns = 0, -1
        if self._pending and not self._parked and self._reading:
            self._parked = True  # for the reads in flight now, not those it sends or after
            self._era += 1
            self._awaited = self._reading
        reads, self._reads = self._reads, []
        in_turn: dict[OneWave, list[tuple[asyncio.Future[Any], Start]]] = {}
        for future, start, one_wave in reads:
            if future.done():  # given up before it went out
                continue
            self._reading += 1
            if one_wave is None:
                self._sent[future] = self._era, asyncio.ensure_future(_query(future, start))
            else:
                self._sent[future] = self._era, None
                in_turn.setdefault(one_wave, []).append((future, start))
        for one_wave, some in in_turn.items():
            self._keep(asyncio.ensure_future(_in_turn(one_wave, some)))
        if self._awaited or not self._pending:
            return
        self._parked = False
        pending, self._pending = self._pending, {}
        assert self._session is not None
        session, tenant = self._session
        for target, keys in pending.items():
            for some in [keys] if target.batched else [[key] for key in keys]:
                self._keep(
                    asyncio.ensure_future(self.read(self._dispatch(session, tenant, target, some)))
                )

    def _keep(self, task: asyncio.Future[None]) -> None:
        """Holds `task` until it is done."""
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


async def _query(answer: asyncio.Future[Any], start: Start) -> None:
    """Reads a query into `answer`: its page, or its exception."""
    try:
        found = await start()
    except Exception as exc:
        found = exc
    except BaseException:
        answer.cancel()  # those asking read again
        raise
    if not answer.done():
        answer.set_result(found)


async def _in_turn(one_wave: OneWave, reads: list[tuple[asyncio.Future[Any], Start]]) -> None:
    """Reads queries one after another into their answers, in one wave, skipping those
    given up before their turn: on a store that answers inline, with no task each."""
    with one_wave():
        for n, (answer, start) in enumerate(reads):
            if answer.done():  # given up
                continue
            try:
                found = await start()
            except Exception as exc:
                found = exc
            except BaseException:
                for later, _ in reads[n:]:
                    later.cancel()  # those asking read again
                raise
            if not answer.done():
                answer.set_result(found)


def _one_wave(store: Store | None) -> OneWave | None:
    """`store`'s `one_wave` if it answers inline and counts waves, else None."""
    if store is None or not getattr(store, "answers_inline", False):
        return None
    one_wave: OneWave | None = getattr(store, "one_wave", None)
    return one_wave


async def _run(session: Session, tenant: str, target: Target, keys: list[Key]) -> Sequence[Any]:
    """Each key's item, in order: a batch get's keys in one call, a get's one key."""
    scope = (tenant,) if target.scoped else ()
    if target.batched:
        refs = [key[0] if len(key) == 1 else key for key in keys]
        found: list[Any] = await target.function(session, *scope, refs)
        return found
    (key,) = keys
    return [await target.function(session, *scope, **dict(zip(target.params, key, strict=True)))]

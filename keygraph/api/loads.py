"""A request's loads of items by key, as a DataLoader makes them: the keys its fields ask
in the same turns of the event loop go out together, one call of a batch get for all of a
target's keys (or concurrent gets), once the request's reads in flight are answered; and its
queries, an identical one (same function and arguments) read once. What relations
(relations.py) and an extension's `load_many` read through."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from keygraph.store import Session, Store

Key = tuple[Any, ...]
Start = Callable[[], Awaitable[Any]]
"""Starts a read."""
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
    MAX_TURNS), each target's in one dispatch; a key asked again shares its first load, and
    a query asked again (`queries`) its first read."""

    def __init__(self) -> None:
        self._loaded: dict[tuple[Target, Key], asyncio.Future[Any]] = {}
        self._queried: dict[Hashable, asyncio.Future[Any]] = {}
        """Each query's answer or exception, by its function and arguments."""
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

    def forget(self) -> None:
        """Drops the items loaded and queries read so far (not those on their way): a
        subscription's next event, or what a mutation's write follows, reads them afresh."""
        self._loaded = {key: found for key, found in self._loaded.items() if not found.done()}
        self._queried = {key: found for key, found in self._queried.items() if not found.done()}

    async def queries(
        self, reads: Sequence[tuple[Hashable | None, Start]], store: Store | None = None
    ) -> list[Any]:
        """Each read's answer or exception, in order: those not read yet in this request sent
        together (as one `read`, on `store`), an identical read (same `Hashable`; None for one
        never shared) sharing the answer of one asked before or by another field."""
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[Any]] = []
        own: list[tuple[Hashable | None, asyncio.Future[Any], Start]] = []
        for key, start in reads:
            found = None if key is None else self._queried.get(key)
            if found is None or found.cancelled():
                found = loop.create_future()
                if key is not None:
                    self._queried[key] = found
                own.append((key, found, start))
            futures.append(found)
        if own:
            try:
                answers = await self.read(_together([start for _, _, start in own], store))
            except BaseException:
                for key, future, _ in own:  # cancelled: those sharing it read again
                    future.cancel()
                    self._given_up(key, future)
                raise
            for (_, future, _), answer in zip(own, answers, strict=True):
                future.set_result(answer)
            if len(own) == len(reads):
                return answers
        waiting = {future for future in futures if not future.done()}
        if waiting:
            await asyncio.wait(waiting)
        again = [n for n, future in enumerate(futures) if future.cancelled()]
        answers = [None if future.cancelled() else future.result() for future in futures]
        if again:  # another field gave up the read these shared
            read_again = await self.queries([reads[n] for n in again], store)
            for n, answer in zip(again, read_again, strict=True):
                answers[n] = answer
        return answers

    def _given_up(self, key: Hashable | None, found: asyncio.Future[Any]) -> None:
        """Forgets a query given up (`found`, cancelled) under `key`: the next asks again."""
        if key is not None and self._queried.get(key) is found:
            del self._queried[key]

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


async def _together(starts: list[Start], store: Store | None) -> list[Any]:
    """Each read's answer or exception, in order, the reads sent together: on a store that
    answers inline and counts waves, one after another in one wave, without a task each
    (as they would take their turns anyway), after the one yield to the event loop each
    would make first (counting.py), so that the calls started this turn are answered first."""
    inline = store is not None and getattr(store, "answers_inline", False)
    one_wave = getattr(store, "one_wave", None) if inline else None
    if one_wave is not None:
        await asyncio.sleep(0)
        with one_wave():
            return [await _settle(start()) for start in starts]
    if len(starts) == 1:
        return [await _settle(starts[0]())]
    return await asyncio.gather(*(start() for start in starts), return_exceptions=True)


async def _settle(call: Awaitable[Any]) -> Any:
    try:
        return await call
    except Exception as exc:
        return exc

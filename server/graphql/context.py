"""The per-request context every resolver sees: the caller's tenant, the data-layer session
and the request's DataLoaders; and what the HTTP layer learns about the request."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import strawberry
from graphql import OperationType
from strawberry.dataloader import DataLoader, DefaultCache, LoaderTask, get_current_batch

from keygraph.api.shape import Estimate
from keygraph.caller import Caller
from keygraph.serve.budget import Admission, Budget
from keygraph.serve.literals import Binding
from keygraph.serve.parted import Stream
from keygraph.store import Session
from keygraph.stores.counting import CountingStore

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
M = TypeVar("M")


class SharedLoader(DataLoader[K, V]):
    """A DataLoader whose loads are shared safely: each caller waits on its own shield of the
    cached future, so a caller cancelled while waiting (graphql-core cancels the siblings of
    a field that failed) does not cancel the load for every other field waiting on it.

    As no caller can cancel a load's future, a batch needs no callback on each of its
    futures to notice that all were cancelled (Strawberry's `Batch.add_task`): a batch of
    100 keys settles without 100 event-loop callbacks. Cancelling the request cancels its
    batches' tasks (`Context.close`)."""

    def _future(self, key: K) -> asyncio.Future[V]:
        """DataLoader.load, the key added to the current batch without a callback."""
        if self.cache:
            cached = self.cache_map.get(key)
            if cached is not None and not cached.cancelled():
                return cached
        future: asyncio.Future[V] = self.loop.create_future()
        if self.cache:
            self.cache_map.set(key, future)
        get_current_batch(self).tasks.append(LoaderTask(key, future))
        return future

    def load(self, key: K) -> Awaitable[V]:
        return asyncio.shield(self._future(key))

    async def load_many(self, keys: Iterable[K]) -> list[V]:
        """The values of `keys` in order; the first failure among them raises. The futures
        of one batch settle together, so waiting on them one by one (each behind a shield)
        usually waits once, without the shield and callbacks per key of a gather."""
        futures = self._futures(keys)
        for future in futures:
            if not future.done():
                await asyncio.shield(future)
        failures = [future.exception() for future in futures]
        failure = next((error for error in failures if error is not None), None)
        if failure is not None:
            raise failure
        return [future.result() for future in futures]

    def _futures(self, keys: Iterable[K]) -> list[asyncio.Future[V]]:
        """`_future` of each key; with the default cache and no batch size limit, the keys
        go into one batch, looked up in the cache's dict directly."""
        cache_map = self.cache_map if self.cache else None
        if type(cache_map) is not DefaultCache or self.max_batch_size is not None:
            return [self._future(key) for key in keys]
        found, key_of = cache_map.cache_map, cache_map.cache_key_fn
        create, batch = self.loop.create_future, None
        futures: list[asyncio.Future[V]] = []
        for key in keys:
            cache_key = key_of(key)
            future = found.get(cache_key)
            if future is None or future.cancelled():
                future = found[cache_key] = create()
                if batch is None:
                    batch = get_current_batch(self)
                batch.tasks.append(LoaderTask(key, future))
            futures.append(future)
        return futures

    def load_ahead(self, key: K) -> Awaitable[V]:
        """The load without a shield of its own, for a caller that shields all it waits on
        at once (prefetch.py): one shield instead of one a key."""
        return self._future(key)


@dataclass
class Context:
    """Built once per request from a verified token; the tenant never comes from arguments."""

    tenant: str
    caller: Caller
    session: Session
    """The caller's: each generated query function asks its pattern's guard first."""
    server_session: Session
    """The server's own, on the same store: for the writes of a mutation whose guard the
    caller passed, which read what the caller itself may not (email claims, counts)."""
    request_id: str
    dev: bool = False
    unrestricted: bool = False
    """Whether the caller may read every field, whoever it belongs to (an admin)."""
    batching: bool = True
    """Off only to measure the naive baseline: every load is its own store call."""
    stream: Stream | None = None
    """Set when the response is read and sent in parts (keygraph/serve/parted.py)."""
    _loaders: dict[str, DataLoader[Any, Any]] = field(default_factory=dict)
    _batches: set[asyncio.Task[Any]] = field(default_factory=set)
    _converted: dict[int, tuple[Any, Any]] = field(default_factory=dict)

    @property
    def subject(self) -> str | None:
        return self.caller.subject

    def converted(self, model: M, convert: Callable[[M], V]) -> V:
        """`convert(model)`, once per model object in a request: a page of users shares
        the groups its loader read once."""
        found = self._converted.get(id(model))
        if found is not None and found[0] is model:
            return cast(V, found[1])
        node = convert(model)
        self._converted[id(model)] = (model, node)
        return node

    def loader(
        self, name: str, load: Callable[[Sequence[K]], Awaitable[Sequence[V | BaseException]]]
    ) -> SharedLoader[K, V]:
        """The request's DataLoader called `name`, created on first use: identical keys
        within a request load once, and keys asked for in one tick go out in one batch."""
        existing = self._loaders.get(name)
        if existing is None:
            tracked = self._tracked(load)
            existing = (
                SharedLoader(load_fn=tracked)
                if self.batching
                else SharedLoader(load_fn=tracked, max_batch_size=1, cache=False)
            )
            self._loaders[name] = existing
        return cast(SharedLoader[K, V], existing)

    def _tracked(
        self, load: Callable[[Sequence[K]], Awaitable[Sequence[V | BaseException]]]
    ) -> Callable[[Sequence[K]], Awaitable[Sequence[V | BaseException]]]:
        """`load`, noting the task each batch runs in while it runs: DataLoaders run their
        batches in tasks of their own, which cancelling the request does not reach."""

        async def run(keys: Sequence[K]) -> Sequence[V | BaseException]:
            task = asyncio.current_task()
            if task is not None:
                self._batches.add(task)
            try:
                return await load(keys)
            finally:
                if task is not None:
                    self._batches.discard(task)

        return run

    def close(self) -> None:
        """Cancels the batches still running (a request cancelled at its timeout) and drops
        the request's loaders: their batch functions refer back to this context, so what
        they loaded would otherwise wait for the cycle collector to be freed."""
        for task in list(self._batches):
            task.cancel()
        self._batches.clear()
        self.forget()

    def forget(self) -> None:
        """Drops what the request's loaders read, once it is in the response."""
        self._loaders.clear()
        self._converted.clear()


@dataclass
class RequestContext(Context):
    """The resolvers' Context plus what the HTTP layer and the operation's preparation
    learn about the request."""

    counter: CountingStore | None = None
    operation_name: str | None = None
    budget: Budget | None = None
    """The tenants' budgets this request is charged to (None: not charged)."""
    estimate: Estimate | None = None
    """The operation's cost, once prepared."""
    admission: Admission | None = None
    """What taking the cost from the tenant's budget gave."""
    literals: Binding | None = None
    """The request's literals as variables of its shape's document (keygraph/serve/literals.py):
    errors are located in the request's own text through it."""
    document_cache: str | None = None
    """How the document was found: under its text, its shape, or prepared now."""
    before_run: Callable[[OperationType], Awaitable[bool]] | None = None
    """Asked once the operation is admitted and about to run (an Idempotency-Key's claim,
    server/edge/keyed.py), through `may_run`."""

    async def may_run(self, operation: OperationType) -> bool:
        """Whether the admitted operation runs, as `before_run` says: one that does not
        gives the points it took back to its tenant, and the request is charged nothing."""
        if self.before_run is None or await self.before_run(operation):
            return True
        admission, estimate, budget = self.admission, self.estimate, self.budget
        self.admission = None
        taken = admission is not None and admission.admitted
        if taken and estimate is not None and budget is not None:
            budget.refund(self.tenant, estimate.cost)
        return False


Info = strawberry.Info[Context, None]

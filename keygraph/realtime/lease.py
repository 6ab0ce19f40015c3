"""A lease in the table that elects one holder among any number of contenders, as DynamoDB
lock clients do: taken and renewed by conditional writes on its `version`, which every
write bumps, so a write from a holder that lost it is refused (fenced off).

No clock is shared: a contender takes the lease once it has seen the same version for a
whole `duration` on its own clock (the holder stopped renewing), or at once when the holder
released it. A holder counts its lease from before each renewal was sent, so it stops
acting on it before any contender can take it. The lease item also holds the holder's
checkpoint (`state`), written with each renewal, for the next holder to go on from."""

from __future__ import annotations

import time
from collections.abc import Callable

from keygraph.errors import ConditionFailed
from keygraph.plan import Condition, Get, Item, Key, Put, Update
from keygraph.store import Store


class Lease:
    """One contender for the lease at `key` of `store`."""

    def __init__(
        self,
        store: Store,
        key: Key,
        duration: float,
        holder: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.key = key
        self.duration = duration
        self.holder = holder
        self._clock = clock
        self.version: int | None = None
        """The version this holder last wrote; None while it does not hold the lease."""
        self.term: int | None = None
        """The version it took the lease at: a fencing token that grows with each take."""
        self.state: str | None = None
        """The checkpoint the lease held when taken (None: none yet)."""
        self._seen: tuple[int, float] | None = None
        self._until = 0.0

    @property
    def held(self) -> bool:
        """Whether this holder may act on the lease now."""
        return self.version is not None and self._clock() < self._until

    async def take(self) -> bool:
        """One try at the lease; True when this contender now holds it."""
        started = self._clock()
        item = await self.store.get(Get(self.key, consistent=True))
        if item is None:
            version = 1
            conditions = (Condition("not_exists", next(iter(self.key))),)
        else:
            held = int(item["version"])
            if not item.get("released"):
                if self._seen is None or self._seen[0] != held:
                    self._seen = (held, started)
                    return False
                if started - self._seen[1] < self.duration:
                    return False
            version = held + 1
            conditions = (Condition("equals", "version", held),)
        state = None if item is None else item.get("state")
        taken: Item = {**self.key, "holder": self.holder, "version": version}
        if state is not None:
            taken["state"] = state
        try:
            await self.store.put(Put(taken, conditions))
        except ConditionFailed:
            self._seen = None
            return False
        self.version = self.term = version
        self.state = None if state is None else str(state)
        self._until = started + self.duration
        return True

    async def renew(self, state: str | None = None, *, release: bool = False) -> bool:
        """Holds the lease for another `duration`, keeping `state` as its checkpoint (or
        lets contenders take it at once, with `release`); False when another holder took
        it meanwhile: this one holds it no more."""
        version = self.version
        if version is None:
            return False
        started = self._clock()
        changes: dict[str, object] = {"version": version + 1, "holder": self.holder}
        if state is not None:
            changes["state"] = state
        if release:
            changes["released"] = True
        try:
            await self.store.update(
                Update(self.key, set=changes, conditions=(Condition("equals", "version", version),))
            )
        except ConditionFailed:
            self.version = None
            return False
        self.version = None if release else version + 1
        self._until = started + self.duration
        return True

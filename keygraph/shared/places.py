"""Places every host shares: how many connections or subscriptions a tenant holds across
all of them. Each holder (a worker process) writes its own count per tenant into a hash in
Redis, and keeps a lease key alive while it runs; a take counts the places of holders whose
lease is alive and drops the others', so the places of a host that died come back once its
lease (LEASE seconds) runs out. A holder renews its lease and writes all its counts every
LEASE / 3 seconds, and writes a count that fell at once in the background.

While Redis cannot be reached (link.py) a take is not refused here: the worker's own limit,
checked before, decides alone, as without Redis."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

from .link import Link

LEASE = 15.0
"""Seconds a holder's places count after its last word."""

TAKE = """
redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
local held, others = redis.call('HGETALL', KEYS[1]), 0
for i = 1, #held, 2 do
  if held[i] ~= ARGV[1] then
    if redis.call('EXISTS', ARGV[5] .. held[i]) == 1 then
      others = others + tonumber(held[i + 1])
    else
      redis.call('HDEL', KEYS[1], held[i])
    end
  end
end
if others + tonumber(ARGV[2]) > tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], 2 * tonumber(ARGV[4]))
return 1
"""
"""Sets holder ARGV[1]'s count in KEYS[1] to ARGV[2] (its places with the new one) unless
the live holders would then hold more than ARGV[3]; renews the holder's lease KEYS[2] (ARGV[4]
ms); holders' leases are ARGV[5] and their name. 1 when taken."""

WRITE = """
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
for i = 3, #ARGV, 2 do
  if tonumber(ARGV[i + 1]) > 0 then
    redis.call('HSET', ARGV[i], ARGV[1], ARGV[i + 1])
    redis.call('PEXPIRE', ARGV[i], 2 * tonumber(ARGV[2]))
  else
    redis.call('HDEL', ARGV[i], ARGV[1])
  end
end
return 1
"""
"""Renews holder ARGV[1]'s lease KEYS[1] (ARGV[2] ms) and writes its counts: pairs of a
hash and the count there."""


class SharedPlaces:
    """This holder's places by kind and tenant, counted with every other holder's."""

    def __init__(self, link: Link, prefix: str, lease: float = LEASE) -> None:
        self.link = link
        self.prefix = prefix
        self.holder = uuid.uuid4().hex
        self.lease_ms = int(lease * 1000)
        self.held: dict[tuple[str, str], int] = {}
        self._take = link.script(TAKE)
        self._write = link.script(WRITE)
        self._fallen: set[tuple[str, str]] = set()
        self._writing: asyncio.Task[None] | None = None
        self._renewing: asyncio.Task[None] | None = None

    def _key(self, place: tuple[str, str]) -> str:
        kind, tenant = place
        return f"{self.prefix}places:{kind}:{tenant}"

    @property
    def _lease_key(self) -> str:
        return f"{self.prefix}holder:{self.holder}"

    async def take(self, kind: str, tenant: str, most: int) -> bool:
        """Counts one more `kind` place of `tenant` unless every host's hold `most`."""
        place = (kind, tenant)
        args = (self.holder, self.held.get(place, 0) + 1, most, self.lease_ms)
        taken = await self.link.attempt(
            lambda: self._take(
                keys=[self._key(place), self._lease_key], args=(*args, f"{self.prefix}holder:")
            ),
            "places",
        )
        if taken == 0:
            return False
        self.held[place] = self.held.get(place, 0) + 1
        return True

    def release(self, kind: str, tenant: str) -> None:
        """Gives a place back; Redis is told in the background."""
        place = (kind, tenant)
        left = self.held.get(place, 0) - 1
        if left > 0:
            self.held[place] = left
        else:
            self.held.pop(place, None)
        self._fallen.add(place)
        if self._writing is None:
            self._writing = asyncio.get_running_loop().create_task(self._write_fallen())

    async def _write_fallen(self) -> None:
        try:
            while self._fallen:
                fallen, self._fallen = self._fallen, set()
                if not await self._write_counts(fallen):
                    return
        finally:
            self._writing = None

    async def _write_counts(self, places: set[tuple[str, str]]) -> bool:
        """Writes this holder's count of each place and renews its lease; False when Redis
        could not be told."""
        counts: list[str | int] = []
        for place in places:
            counts += [self._key(place), self.held.get(place, 0)]
        written = await self.link.attempt(
            lambda: self._write(keys=[self._lease_key], args=(self.holder, self.lease_ms, *counts)),
            "places",
        )
        return written is not None

    def start(self) -> None:
        """Renews the lease and writes every count each third of the lease."""
        self._renewing = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            await self._write_counts(set(self.held))

    async def close(self) -> None:
        """Stops renewing, sends what fell, and ends the lease: this holder's places no
        longer count."""
        if self._renewing is not None:
            self._renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewing
        if self._writing is not None:
            await self._writing
        await self.link.attempt(lambda: self.link.client.delete(self._lease_key), "places")

"""Tenants' budgets every host shares: one token bucket per tenant in Redis, refilled and
taken in one Lua script on Redis's clock, so hosts admit a tenant's budget once between
them. `admit` (before a request or a subscribe runs) asks Redis; `take` for work under way
(a subscription's events, a replay's reads) and `refund` answer from this holder's view of
the bucket (its last reply) and send their points to Redis in the background, coalesced per
tenant, so a change fanned out to many subscribers costs one call, not one each.

While Redis cannot be reached (link.py) every call uses the host's own bucket instead, the
one a server without Redis has (its worker's share of the budget)."""

from __future__ import annotations

import asyncio
import functools

from keygraph.serve.budget import Admission, TenantBudget, refused

from .link import Link, number

TAKE = """
local cap, refill, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local held = redis.call('HMGET', KEYS[1], 'points', 'at')
local points, at = tonumber(held[1]) or cap, tonumber(held[2]) or now
points = math.min(cap, points + math.max(0, now - at) * refill)
local admitted = 0
if cost <= points then
  points = points - cost
  admitted = 1
end
redis.call('HSET', KEYS[1], 'points', tostring(points), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((cap - points) / refill * 1000) + 1000)
return {admitted, tostring(points)}
"""
"""Takes ARGV[3] points from the bucket KEYS[1] (capacity ARGV[1], refill ARGV[2] a second)
if it holds them; whether it did and what the bucket holds. A full bucket expires."""

ADJUST = """
local cap, refill = tonumber(ARGV[1]), tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local left = {}
for i, key in ipairs(KEYS) do
  local held = redis.call('HMGET', key, 'points', 'at')
  local points, at = tonumber(held[1]) or cap, tonumber(held[2]) or now
  points = math.min(cap, points + math.max(0, now - at) * refill)
  points = math.max(-cap, math.min(cap, points + tonumber(ARGV[i + 2])))
  redis.call('HSET', key, 'points', tostring(points), 'at', tostring(now))
  redis.call('PEXPIRE', key, math.ceil((cap - points) / refill * 1000) + 1000)
  left[i] = tostring(points)
end
return left
"""
"""Adds ARGV[i + 2] points (taken: negative) to each bucket KEYS[i], in debt at most a whole
bucket; what each then holds."""


class SharedBudget:
    """The tenants' buckets in Redis under `prefix`, with `fallback` for when it is down."""

    def __init__(
        self,
        link: Link,
        prefix: str,
        capacity: float,
        refill_per_second: float,
        fallback: TenantBudget,
    ) -> None:
        self.link = link
        self.prefix = prefix
        self.view = TenantBudget(capacity, refill_per_second)
        """What each tenant's shared bucket held at its last reply, refilled since."""
        self.fallback = fallback
        self._take = link.script(TAKE)
        self._adjust = link.script(ADJUST)
        self._pending: dict[str, float] = {}
        self._sending: asyncio.Task[None] | None = None

    @property
    def capacity(self) -> float:
        return self.view.capacity

    @property
    def refill_per_second(self) -> float:
        return self.view.refill_per_second

    def _key(self, tenant: str) -> str:
        return f"{self.prefix}budget:{tenant}"

    async def admit(self, tenant: str, cost: float) -> Admission:
        """Takes `cost` from the tenant's shared bucket if it holds it (else the host's)."""
        args = (self.capacity, self.refill_per_second, cost)
        reply = await self.link.attempt(
            lambda: self._take(keys=[self._key(tenant)], args=args), "budget"
        )
        if reply is None:
            return self.fallback.take(tenant, cost)
        points = number(reply[1])
        self.view.hold(tenant, points)
        if int(reply[0]) == 1:
            return Admission(True, points)
        return refused(points, cost, self.capacity, self.refill_per_second)

    def take(self, tenant: str, cost: float) -> Admission:
        """Takes `cost` if this holder's view of the bucket holds it; Redis is told after."""
        if not self.link.up:
            return self.fallback.take(tenant, cost)
        admission = self.view.take(tenant, cost)
        if admission.admitted:
            self._send(tenant, -cost)
        return admission

    def refund(self, tenant: str, points: float) -> float:
        """Gives back `points`; what the tenant then holds, as far as this holder knows."""
        if not self.link.up:
            return self.fallback.refund(tenant, points)
        self._send(tenant, max(0.0, points))
        return self.view.refund(tenant, points)

    def remaining(self, tenant: str) -> float:
        return (self.view if self.link.up else self.fallback).remaining(tenant)

    def _send(self, tenant: str, points: float) -> None:
        self._pending[tenant] = self._pending.get(tenant, 0.0) + points
        if self._sending is None:
            self._sending = asyncio.get_running_loop().create_task(self._send_pending())

    async def _send_pending(self) -> None:
        """Sends what was taken and given back, a call for all tenants, until none is left
        (or Redis is down: the host's own bucket counts then)."""
        try:
            while self._pending:
                pending, self._pending = self._pending, {}
                keys = [self._key(tenant) for tenant in pending]
                args = (self.capacity, self.refill_per_second, *pending.values())
                reply = await self.link.attempt(
                    functools.partial(self._adjust, keys=keys, args=args), "budget"
                )
                if reply is None:
                    return
                for tenant, points in zip(pending, reply, strict=True):
                    self.view.hold(tenant, number(points))
        finally:
            self._sending = None

    async def close(self) -> None:
        """Sends what is still pending."""
        if self._sending is not None:
            await self._sending

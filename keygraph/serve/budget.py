"""Each tenant's budget of cost points: a token bucket, as Shopify meters its API.

A request takes its requested cost from its tenant's bucket before it runs and gets back what
it did not use (requested minus the objects it returned) when it ends. A bucket holds at most
`capacity` points and refills at `refill_per_second`; a request that finds too few points is
refused with the seconds until there will be enough. Buckets live in one process: with
several workers each holds its own share (see `share`), and a bucket that has refilled to the
brim is forgotten, so idle tenants cost no memory. `Budget` is what the server asks of a
budget: this one, or one every host shares (keygraph/shared/bucket.py).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from graphql import GraphQLError

CAPACITY = 100_000
"""A bucket's points by default: at least the costliest operation allowed."""
REFILL_PER_SECOND = 20_000.0
FORGET_AFTER = 10_000
"""Buckets kept before the full ones are dropped."""


@dataclass(frozen=True, slots=True)
class Admission:
    """The outcome of taking points: whether the request may run, what the tenant has left,
    and (when refused) the whole seconds to wait."""

    admitted: bool
    remaining: float
    retry_after: int = 0


class Budget(Protocol):
    """The tenants' budgets a server charges: `admit` before work starts asks the bucket
    that decides (it may be remote); `take` for work under way (a subscription's events, a
    replay's reads), `refund` and `remaining` answer at once from what the holder knows."""

    @property
    def capacity(self) -> float: ...

    @property
    def refill_per_second(self) -> float: ...

    async def admit(self, tenant: str, cost: float) -> Admission: ...

    def take(self, tenant: str, cost: float) -> Admission: ...

    def refund(self, tenant: str, points: float) -> float: ...

    def remaining(self, tenant: str) -> float: ...


@dataclass(slots=True)
class _Bucket:
    points: float
    at: float


class TenantBudget:
    """Token buckets of cost points, one per tenant, created full."""

    def __init__(
        self,
        capacity: float,
        refill_per_second: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if capacity <= 0 or refill_per_second <= 0:
            raise ValueError("a budget needs a positive capacity and refill rate")
        self.capacity = capacity
        self.refill_per_second = refill_per_second
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def _bucket(self, tenant: str) -> _Bucket:
        now = self._clock()
        bucket = self._buckets.get(tenant)
        if bucket is None:
            if len(self._buckets) >= FORGET_AFTER:
                self._forget_full(now)
            bucket = self._buckets[tenant] = _Bucket(self.capacity, now)
        else:
            refilled = bucket.points + (now - bucket.at) * self.refill_per_second
            bucket.points, bucket.at = min(self.capacity, refilled), now
        return bucket

    def _forget_full(self, now: float) -> None:
        for tenant, bucket in list(self._buckets.items()):
            if bucket.points + (now - bucket.at) * self.refill_per_second >= self.capacity:
                del self._buckets[tenant]

    def take(self, tenant: str, cost: float) -> Admission:
        """Take `cost` points from the tenant's bucket if it holds them."""
        bucket = self._bucket(tenant)
        if cost <= bucket.points:
            bucket.points -= cost
            return Admission(True, bucket.points)
        return refused(bucket.points, cost, self.capacity, self.refill_per_second)

    async def admit(self, tenant: str, cost: float) -> Admission:
        """`take`: this bucket is the one that decides."""
        return self.take(tenant, cost)

    def hold(self, tenant: str, points: float) -> None:
        """Sets the tenant's points to what a bucket elsewhere says it holds."""
        bucket = self._bucket(tenant)
        bucket.points = min(self.capacity, points)

    def refund(self, tenant: str, points: float) -> float:
        """Give back points a request did not use; what the tenant then has."""
        bucket = self._bucket(tenant)
        bucket.points = min(self.capacity, bucket.points + max(0.0, points))
        return bucket.points

    def remaining(self, tenant: str) -> float:
        return self._bucket(tenant).points


def refused(points: float, cost: float, capacity: float, refill_per_second: float) -> Admission:
    """The refusal of `cost` by a bucket holding `points`, with the whole seconds until its
    refill holds the cost (or the whole bucket, for a cost above it)."""
    wait = (min(cost, capacity) - points) / refill_per_second
    return Admission(False, points, max(1, math.ceil(wait)))


def share(capacity: float, refill_per_second: float, workers: int) -> tuple[float, float]:
    """One worker's bucket when `workers` processes serve a host: each gets an even share,
    so the host admits the configured budget when a tenant's requests spread over them."""
    return capacity / workers, refill_per_second / workers


def throttled(admission: Admission, cost: int) -> GraphQLError:
    """THROTTLED, with the seconds to wait: what an operation of `cost` the budget refused
    answers, over HTTP (429) as over WebSocket."""
    return GraphQLError(
        f"the tenant's budget holds {int(admission.remaining)} points, the operation "
        f"costs {cost}; retry in {admission.retry_after} s",
        extensions={"code": "THROTTLED", "retryAfter": admission.retry_after},
    )

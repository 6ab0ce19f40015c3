"""The tenants' budgets a worker charges and the places it counts: its own bucket (its share
of the configured budget, keygraph/serve/budget.py), or, with KEYGRAPH_REDIS_URL, buckets
and places every host shares through Redis, with its own bucket while Redis cannot be
reached (keygraph/shared/)."""

from __future__ import annotations

from dataclasses import dataclass

from keygraph.serve.budget import Budget, TenantBudget, share
from keygraph.shared.bucket import SharedBudget
from keygraph.shared.link import Link, key_prefix
from keygraph.shared.places import SharedPlaces
from server.settings import Settings


@dataclass(frozen=True)
class Shared:
    """A worker's link to Redis and what it shares there."""

    link: Link
    budget: SharedBudget
    places: SharedPlaces

    def start(self) -> None:
        self.places.start()

    async def close(self) -> None:
        """Sends what is pending, ends this worker's lease, closes the link."""
        await self.budget.close()
        await self.places.close()
        await self.link.close()


def budgets(settings: Settings) -> tuple[Budget, Shared | None]:
    """The budget the worker charges, and what it shares through Redis (None: nothing)."""
    limits = settings.limits
    own = TenantBudget(*share(limits.tenant_budget, limits.tenant_refill, settings.workers))
    if settings.redis_url is None:
        return own, None
    from server.observability.metrics import FALLBACKS_BY, REDIS_UP  # only with Redis

    link = Link(
        settings.redis_url,
        fell_back=lambda what: FALLBACKS_BY(what).inc(),
        changed=lambda up: REDIS_UP.set(1 if up else 0),
    )
    REDIS_UP.set(1)
    prefix = key_prefix(settings.table)
    budget = SharedBudget(link, prefix, limits.tenant_budget, limits.tenant_refill, own)
    shared = Shared(link, budget, SharedPlaces(link, prefix))
    return budget, shared

"""The subscriptions a worker holds, per tenant and in all, within its subscription settings
(subscription_settings.py): both servers count them here. A subscribe past a limit is
refused with an `error` message, code LIMIT_CODE; the connection and its other
subscriptions go on. With places shared through Redis (keygraph/shared/places.py, the
repository's server's), a tenant's limit counts its places on every host, and the worker's
own count still holds it on the worker."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .subscription_settings import SubscriptionSettings

if TYPE_CHECKING:
    from keygraph.shared.places import SharedPlaces

LIMIT_CODE = "SUBSCRIPTION_LIMIT"
SUBSCRIPTIONS = "subscriptions"
"""The kind of the places a subscription takes, when shared."""


class SubscriptionLimits:
    """The open subscriptions of one worker, per tenant and in all. Without shared places a
    take is decided before anything is awaited, so subscribes at once never pass a limit."""

    def __init__(self, settings: SubscriptionSettings, shared: SharedPlaces | None = None) -> None:
        self.per_tenant = settings.max_subscriptions_per_tenant
        self.per_worker = settings.max_subscriptions_per_worker
        self.shared = shared
        self._tenants: Counter[str] = Counter()
        self._total = 0

    async def take(self, tenant: str) -> str | None:
        """Counts one more subscription of `tenant`; why not, when a limit is reached."""
        if self._total >= self.per_worker:
            return f"the server holds its most subscriptions ({self.per_worker})"
        if self._tenants[tenant] >= self.per_tenant:
            return f"the tenant holds its most subscriptions ({self.per_tenant})"
        self._tenants[tenant] += 1
        self._total += 1
        shared = self.shared
        if shared is not None and not await shared.take(SUBSCRIPTIONS, tenant, self.per_tenant):
            self._forget(tenant)
            return f"the tenant holds its most subscriptions ({self.per_tenant})"
        return None

    def held(self) -> tuple[int, dict[str, int]]:
        """The subscriptions held in all, and by each tenant that holds any."""
        return self._total, dict(self._tenants)

    def release(self, tenant: str) -> None:
        """Gives back a place `tenant` took."""
        self._forget(tenant)
        if self.shared is not None:
            self.shared.release(SUBSCRIPTIONS, tenant)

    def _forget(self, tenant: str) -> None:
        self._total -= 1
        self._tenants[tenant] -= 1
        if self._tenants[tenant] <= 0:
            del self._tenants[tenant]

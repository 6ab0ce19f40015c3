"""How many subscriptions a tenant and a worker hold at once (a connection's own count is
the connection's): a subscribe over a limit is refused with an `error` message."""

from __future__ import annotations

from collections import Counter

LIMIT_CODE = "SUBSCRIPTION_LIMIT"


class SubscriptionLimits:
    """The open subscriptions of one worker, per tenant and in all."""

    def __init__(self, per_tenant: int, per_worker: int) -> None:
        self.per_tenant = per_tenant
        self.per_worker = per_worker
        self._tenants: Counter[str] = Counter()
        self._total = 0

    def take(self, tenant: str) -> str | None:
        """Counts one more subscription of `tenant`; why not, when a limit is reached."""
        if self._total >= self.per_worker:
            return f"the server holds its most subscriptions ({self.per_worker})"
        if self._tenants[tenant] >= self.per_tenant:
            return f"the tenant holds its most subscriptions ({self.per_tenant})"
        self._tenants[tenant] += 1
        self._total += 1
        return None

    def release(self, tenant: str) -> None:
        self._total -= 1
        self._tenants[tenant] -= 1
        if self._tenants[tenant] <= 0:
            del self._tenants[tenant]

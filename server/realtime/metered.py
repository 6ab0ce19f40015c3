"""A subscription's events, each charged to its tenant's budget as an HTTP request is: the
subscription's estimated cost is taken before the event resolves and what the event did not
return is given back. When the budget no longer holds the cost the subscription ends
THROTTLED (with `retryAfter`) before the event reads the store; the client resumes from its
last cursor and misses nothing."""

from __future__ import annotations

from typing import Any

from keygraph.api.shape import Estimate, count_objects
from keygraph.serve.budget import Budget, throttled
from server.errors import ApiError


class Throttled(ApiError):
    """The tenant's budget does not hold the next event's cost."""

    code = "THROTTLED"


class Meter:
    """What one subscription's events cost, charged to its tenant's budget."""

    __slots__ = ("budget", "estimate", "tenant")

    def __init__(self, budget: Budget, tenant: str, estimate: Estimate) -> None:
        self.budget = budget
        self.tenant = tenant
        self.estimate = estimate

    def take(self) -> None:
        """Takes an event's estimated cost; raises Throttled when the budget lacks it."""
        self.charge(self.estimate.cost)

    def take_many(self, events: int) -> bool:
        """Takes the estimated cost of `events` events at once, as that many takes in a row
        would; False, and nothing taken, when the budget lacks any of it."""
        return self.budget.take(self.tenant, self.estimate.cost * events).admitted

    def charge(self, points: int) -> None:
        """Takes `points` for work done (a replay's reads); raises Throttled when the
        budget lacks them."""
        admission = self.budget.take(self.tenant, points)
        if not admission.admitted:
            refused = throttled(admission, points)
            raise Throttled(refused.message, retryAfter=admission.retry_after)

    def objects(self, data: Any) -> int:
        """The counted objects an event's data holds."""
        return count_objects(data, self.estimate.shape)

    def settle(self, objects: int, events: int = 1) -> None:
        """Gives back what `events` events that each returned `objects` did not use of
        their estimate."""
        self.budget.refund(self.tenant, (self.estimate.cost - objects) * events)

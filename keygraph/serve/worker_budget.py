"""A worker's tenant budget: its share of the budget asked for, or the whole one shared
through Redis (keygraph/shared/) with that share as its fallback."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from .budget import Budget, TenantBudget, share
from .scale_settings import ScaleSettings

Closing = tuple[Callable[[], Awaitable[None]], ...]
"""What the app awaits as it stops (a shared budget's link to Redis)."""


def worker_budget(
    capacity: int, refill: float, scale: ScaleSettings, table: str
) -> tuple[Budget, Closing]:
    """The budget of one of `scale`'s workers, of `capacity` points refilled at `refill` a
    second for all of them, keyed by `table` in Redis; and what the app awaits as it stops."""
    own = TenantBudget(*share(capacity, refill, scale.workers))
    if scale.redis_url is None:
        return own, ()
    from keygraph.shared.bucket import SharedBudget
    from keygraph.shared.link import Link, key_prefix

    link = Link(scale.redis_url)
    budget = SharedBudget(link, key_prefix(table), capacity, refill, own)
    return budget, (budget.close, link.close)

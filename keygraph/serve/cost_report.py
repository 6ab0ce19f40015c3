"""`extensions.cost`, as both servers answer it: what an operation was estimated to cost,
the limit, what it took (the objects its answer holds, store calls, capacity units) and,
once the tenant is known, its budget, after the points it did not use are given back."""

from __future__ import annotations

from typing import Any

from .budget import Budget


def cost_report(
    requested: int,
    limit: int,
    objects: int,
    store_calls: int,
    read_units: float,
    write_units: float,
) -> dict[str, Any]:
    """The report of a request whose tenant is not known: no budget."""
    return {
        "requested": requested,
        "limit": limit,
        "actual": {
            "objects": objects,
            "storeCalls": store_calls,
            "readUnits": read_units,
            "writeUnits": write_units,
        },
    }


def with_budget(
    report: dict[str, Any], budget: Budget, tenant: str, unused: float | None
) -> dict[str, Any]:
    """`report` with the tenant's budget, `unused` points (of a request it admitted) given
    back to it first."""
    remaining = budget.refund(tenant, unused) if unused is not None else budget.remaining(tenant)
    report["budget"] = {
        "remaining": int(remaining),
        "capacity": int(budget.capacity),
        "refillPerSecond": budget.refill_per_second,
    }
    return report

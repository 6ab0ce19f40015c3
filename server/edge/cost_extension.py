"""`extensions.cost` of every response, answered or refused: the operation's requested and
actual cost and, once the tenant is known, its budget; points a request did not use go
back to the budget here."""

from __future__ import annotations

from typing import Any

from keygraph.serve.budget import Budget
from server.edge.request import GraphQLRequest
from server.graphql.cost import count_objects


class CostExtension:
    """The cost report of a request, against one cost limit and the tenants' budgets."""

    def __init__(self, max_cost: int, budget: Budget) -> None:
        self.max_cost = max_cost
        self.budget = budget

    def __call__(self, request: GraphQLRequest, data: Any) -> dict[str, Any]:
        """extensions.cost: requested and actual cost, and (once the tenant is known) its
        budget. Points the request did not use go back to the budget here."""
        ctx = request.ctx
        estimate = ctx.estimate if ctx is not None else None
        objects = count_objects(data, estimate.shape) if estimate is not None else 0
        if ctx is not None and ctx.stream is not None:
            objects += ctx.stream.objects()
        meter = request.meter
        cost: dict[str, Any] = {
            "requested": estimate.cost if estimate is not None else 0,
            "limit": self.max_cost,
            "actual": {
                "objects": objects,
                "storeCalls": ctx.counter.calls if ctx is not None and ctx.counter else 0,
                "readUnits": meter.read_units,
                "writeUnits": meter.write_units,
            },
        }
        if request.claims is not None:
            tenant = request.claims.tenant
            admission = ctx.admission if ctx is not None else None
            if admission is not None and admission.admitted and estimate is not None:
                remaining = self.budget.refund(tenant, estimate.cost - objects)
            else:
                remaining = self.budget.remaining(tenant)
            cost["budget"] = {
                "remaining": int(remaining),
                "capacity": int(self.budget.capacity),
                "refillPerSecond": self.budget.refill_per_second,
            }
        return cost

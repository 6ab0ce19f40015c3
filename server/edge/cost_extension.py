"""`extensions.cost` of every response, answered or refused (its shape:
keygraph/serve/cost_report.py): the operation's requested and actual cost and, once the
tenant is known, its budget; points a request did not use go back to the budget here."""

from __future__ import annotations

from typing import Any

from keygraph.api.shape import count_objects
from keygraph.serve.budget import Budget
from keygraph.serve.cost_report import cost_report, with_budget
from server.edge.request import GraphQLRequest


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
        counter = ctx.counter if ctx is not None else None
        cost = cost_report(
            estimate.cost if estimate is not None else 0,
            self.max_cost,
            objects,
            counter.calls if counter is not None else 0,
            meter.read_units,
            meter.write_units,
        )
        if request.claims is None:
            return cost
        admission = ctx.admission if ctx is not None else None
        unused = None
        if admission is not None and admission.admitted and estimate is not None:
            unused = estimate.cost - objects
        return with_budget(cost, self.budget, request.claims.tenant, unused)

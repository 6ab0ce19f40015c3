"""A subscription's results, each event charged to its tenant's budget as an HTTP request
is: the subscription's estimated cost is taken before the event resolves and what the event
did not return is given back. When the budget no longer holds the cost the subscription
ends THROTTLED (with `retryAfter`) before the event reads the store; the client resumes
from its last cursor and misses nothing."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    GraphQLSchema,
    create_source_event_stream,
    execute_subscription_event,
    map_source_to_response_event,
)
from graphql import Executor as GraphQLExecutor

from server.errors import ApiError
from server.graphql.budget import TenantBudget, throttled
from server.graphql.cost import Estimate, count_objects
from server.graphql.executor import Executor


class Throttled(ApiError):
    """The tenant's budget does not hold the next event's cost."""

    code = "THROTTLED"


class Meter:
    """What one subscription's events cost, charged to its tenant's budget."""

    def __init__(self, budget: TenantBudget, tenant: str, estimate: Estimate) -> None:
        self.budget = budget
        self.tenant = tenant
        self.estimate = estimate

    async def run(self, event: GraphQLExecutor[Any]) -> ExecutionResult:
        """Resolves one event once its cost is taken; raises Throttled when it is not."""
        cost = self.estimate.cost
        admission = self.budget.take(self.tenant, cost)
        if not admission.admitted:
            refused = throttled(admission, cost)
            raise Throttled(refused.message, retryAfter=admission.retry_after)
        result = execute_subscription_event(event)
        if inspect.isawaitable(result):
            result = await result
        self.budget.refund(self.tenant, cost - count_objects(result.data, self.estimate.shape))
        return result


async def subscribe(
    schema: GraphQLSchema,
    document: DocumentNode,
    context: Any,
    variables: dict[str, Any],
    name: str | None,
    meter: Meter | None,
) -> AsyncIterator[ExecutionResult] | ExecutionResult:
    """The subscription's stream of results (each event run by `meter`, when given), or
    the result holding the errors that stop it."""
    executor = Executor.build(schema, document, None, context, variables, name)
    if isinstance(executor, list):
        return ExecutionResult(None, errors=executor)
    source = create_source_event_stream(executor)
    if inspect.isawaitable(source):
        source = await source
    if isinstance(source, ExecutionResult):
        return source
    run = execute_subscription_event if meter is None else meter.run
    return map_source_to_response_event(executor, source, run)

"""Subscription operations compiled for their events: the root field's value is the event
itself (the source stream's payload, the executor's root value), as graphql-core's
per-event execution takes it, and the selection below it compiles as a query's does."""

from __future__ import annotations

from typing import Any

from graphql import GraphQLObjectType, OperationType
from graphql.execution.collect_fields import FieldDetails, collect_fields

from .plan import Compiler, FieldPlan, OperationPlan, Unsupported


def _event(event: Any) -> Any:
    """The value of a subscription root field for one event: the event."""
    return event


class EventCompiler(Compiler):
    """Compiles a subscription operation into the plan each of its events runs."""

    def compile(self) -> OperationPlan:
        if self.operation.operation is not OperationType.SUBSCRIPTION:
            raise Unsupported("not a subscription")
        root_type = self.schema.subscription_type
        if root_type is None:
            raise Unsupported("no subscription type")
        grouped, defers, _ = collect_fields(
            self.schema, self.fragments, self.variables, root_type, self.operation
        )
        if defers:
            raise Unsupported("@defer")
        return OperationPlan(self._object_plan(root_type, grouped), serial=False)

    def _field_plan(
        self, parent: GraphQLObjectType, key: str, details: list[FieldDetails]
    ) -> FieldPlan:
        plan = super()._field_plan(parent, key, details)
        if parent is not self.schema.subscription_type or plan.typename:
            return plan
        # the field's resolver made the source stream when subscribing; per event its
        # value is the event, whatever its arguments
        plan.attribute = None
        plan.resolver = _event
        plan.positional = False
        plan.pass_self = True
        plan.info_name = None
        plan.source_names = ()
        plan.takes_arguments = False
        return plan

"""The executor Strawberry runs operations with when compiled execution is on: it compiles
the operation (once per operation and @skip/@include values) and runs its plan, and hands
what the compiler does not cover to graphql-core's executor, unchanged."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from graphql import OperationDefinitionNode, OperationType

from server.graphql.compiled.plan import (
    CompiledOperation,
    Compiler,
    OperationPlan,
    Unsupported,
    directive_variables,
)
from server.graphql.compiled.run import Run
from server.graphql.compiled.subscription import EventCompiler
from server.graphql.executor import Executor

_KEPT = 512
"""Operations whose plans are kept, as many as prepared documents (prepare.py)."""
_PLANS_KEPT = 64
"""Plans an operation keeps, one per value of its @skip/@include variables."""

_compiled: OrderedDict[int, CompiledOperation] = OrderedDict()


class CompiledExecutor(Executor):
    def run_operation(self, serially: bool | None) -> Any:
        plan = None
        if serially is None and self.abort_signal is None and not self._has_middleware():
            plan = self.plan()
        if plan is None:
            return super().run_operation(serially)
        return Run(self, plan).start()

    def _has_middleware(self) -> bool:
        manager = self.middleware_manager
        return manager is not None and bool(manager.middlewares)

    def plan(self) -> OperationPlan | None:
        """The operation's plan for these variables (a subscription's: the plan of each
        of its events); None when the compiler leaves the operation to graphql-core (which
        is remembered too)."""
        compiled = _compiled_operation(self.operation, self.fragments)
        coerced = self.variable_values.coerced
        key = tuple(repr(coerced.get(name)) for name in compiled.directive_variables)
        if key in compiled.plans:
            return compiled.plans[key]
        subscription = self.operation.operation is OperationType.SUBSCRIPTION
        compiler = EventCompiler if subscription else Compiler
        try:
            plan: OperationPlan | None = compiler(
                self.schema, self.fragments, self.variable_values, self.operation
            ).compile()
        except Unsupported:
            plan = None
        if len(compiled.plans) >= _PLANS_KEPT:
            compiled.plans.clear()
        compiled.plans[key] = plan
        return plan


def _compiled_operation(operation: OperationDefinitionNode, fragments: Any) -> CompiledOperation:
    found = _compiled.get(id(operation))
    if found is not None and found.operation is operation:
        _compiled.move_to_end(id(operation))
        return found
    found = CompiledOperation(operation, directive_variables(operation, fragments))
    _compiled[id(operation)] = found
    while len(_compiled) > _KEPT:
        _compiled.popitem(last=False)
    return found

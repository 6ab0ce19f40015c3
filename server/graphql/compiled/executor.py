"""The executor Strawberry runs operations with when compiled execution is on: the
runtime's compiled execution (keygraph/execution) with Strawberry's fields, and what the
compiler does not cover handed to Strawberry's executor, unchanged."""

from __future__ import annotations

from typing import Any

from keygraph.execution.executor import plan_of, run_compiled
from keygraph.execution.plan import Compiler, OperationPlan
from server.graphql.compiled.compiler import StrawberryCompiler, StrawberryEventCompiler
from server.graphql.executor import Executor


class CompiledExecutor(Executor):
    compiler: type[Compiler] = StrawberryCompiler
    event_compiler: type[Compiler] = StrawberryEventCompiler

    def run_operation(self, serially: bool | None) -> Any:
        return run_compiled(self, serially, super().run_operation)

    def plan(self) -> OperationPlan | None:
        """The operation's plan for these variables; None: Strawberry runs it."""
        return plan_of(self, self.compiler, self.event_compiler)

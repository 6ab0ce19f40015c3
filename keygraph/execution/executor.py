"""graphql-core's executor with compiled execution: an operation is compiled once per
operation and @skip/@include values into a plan (plan.py) and run (run.py); what the
compiler does not cover (introspection, @defer, middleware) runs on graphql-core, unchanged.
A schema whose fields carry Strawberry's own calling convention compiles with the server's
compiler, a subclass."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from graphql import (
    GraphQLSchema,
    Node,
    OperationDefinitionNode,
    OperationType,
    VariableNode,
)
from graphql.execution import Executor
from graphql.execution.collect_fields import FragmentDetails

from .plan import (
    CompiledOperation,
    Compiler,
    OperationPlan,
    Unsupported,
)
from .run import Run
from .subscription import EventCompiler

_KEPT = 512
"""Operations whose plans are kept, as many as prepared documents."""
_PLANS_KEPT = 64
"""Plans an operation keeps, one per value of its @skip/@include variables."""

_compiled: OrderedDict[int, CompiledOperation] = OrderedDict()


class CompiledExecutor(Executor[Any]):
    """Runs each operation the compiler covers as its plan, others as graphql-core does."""

    compiler: type[Compiler] = Compiler
    event_compiler: type[Compiler] = EventCompiler

    def execute_operation(self, serially: bool | None = None) -> Any:
        return run_compiled(self, serially, super().execute_operation)

    def plan(self) -> OperationPlan | None:
        """The operation's plan for these variables; None: graphql-core runs it."""
        return plan_of(self, self.compiler, self.event_compiler)


def run_compiled(executor: Any, serially: bool | None, otherwise: Any) -> Any:
    """The operation's result as its plan gives it, or as `otherwise(serially)` does when
    it has no plan (or runs serially by request, with an abort signal or middleware)."""
    plan = None
    manager = executor.middleware_manager
    plain = manager is None or not manager.middlewares
    if serially is None and executor.abort_signal is None and plain:
        plan = plan_of(executor, executor.compiler, executor.event_compiler)
    if plan is None:
        return otherwise(serially)
    return Run(executor, plan).start()


def plan_of(
    executor: Any, compiler: type[Compiler], event_compiler: type[Compiler]
) -> OperationPlan | None:
    """The operation's plan for the executor's variables (a subscription's: the plan of each
    of its events); None when the compiler leaves the operation to graphql-core (which is
    remembered too)."""
    compiled = _compiled_operation(executor.schema, executor.operation, executor.fragments)
    coerced = executor.variable_values.coerced
    key = tuple(repr(coerced.get(name)) for name in compiled.directive_variables)
    if key in compiled.plans:
        return compiled.plans[key]
    subscription = executor.operation.operation is OperationType.SUBSCRIPTION
    chosen = event_compiler if subscription else compiler
    try:
        plan: OperationPlan | None = chosen(
            executor.schema, executor.fragments, executor.variable_values, executor.operation
        ).compile()
    except Unsupported:
        plan = None
    if len(compiled.plans) >= _PLANS_KEPT:
        compiled.plans.clear()
    compiled.plans[key] = plan
    return plan


def _compiled_operation(
    schema: GraphQLSchema, operation: OperationDefinitionNode, fragments: Any
) -> CompiledOperation:
    found = _compiled.get(id(operation))
    if found is not None and found.operation is operation and found.schema is schema:
        _compiled.move_to_end(id(operation))
        return found
    found = CompiledOperation(operation, directive_variables(operation, fragments), schema)
    _compiled[id(operation)] = found
    while len(_compiled) > _KEPT:
        _compiled.popitem(last=False)
    return found


def directive_variables(
    operation: OperationDefinitionNode, fragments: dict[str, FragmentDetails]
) -> tuple[str, ...]:
    """The variables the operation's @skip/@include directives (and its fragments') read."""
    found: set[str] = set()
    roots: list[Node] = [operation, *(details.definition for details in fragments.values())]
    for root in roots:
        for node in _walk(root):
            directives = getattr(node, "directives", None) or ()
            for directive in directives:
                for argument in directive.arguments:
                    if isinstance(argument.value, VariableNode):
                        found.add(argument.value.name.value)
    return tuple(sorted(found))


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        selection_set = getattr(current, "selection_set", None)
        if selection_set is not None:
            stack.extend(selection_set.selections)

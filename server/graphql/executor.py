"""graphql-core's executor as every operation runs with it: errors in the variables' values
(a wrong type, an Int out of 32 bits, an unknown enum value, an input object missing a field)
are the client's, BAD_USER_INPUT, rather than errors wrapping an exception (INTERNAL); an
operation runs only once its context allows it (`RequestContext.before_run`); and an
executor that has run holds no reference cycle."""

from __future__ import annotations

from inspect import isawaitable
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    GraphQLSchema,
    get_operation_ast,
)
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from server.graphql.context import RequestContext

_BAD_USER_INPUT = "BAD_USER_INPUT"


class Executor(StrawberryGraphQLCoreExecutionContext):
    """Strawberry's executor, with its variables' errors coded as the client's."""

    @classmethod
    def build(
        cls,
        schema: GraphQLSchema,
        document: DocumentNode,
        root_value: Any = None,
        context_value: Any = None,
        raw_variable_values: dict[str, Any] | None = None,
        operation_name: str | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        """The executor, or the errors that stop the operation: once the operation is
        found, those are its variables' errors, each BAD_USER_INPUT with graphql-core's
        message."""
        built = super().build(
            schema,
            document,
            root_value,
            context_value,
            raw_variable_values,
            operation_name,
            *args,
            **kwargs,
        )
        if not isinstance(built, list):
            return built
        if get_operation_ast(document, operation_name) is None:
            return built  # no such operation, or several without a name
        return [_variable_error(error) for error in built]

    def execute_operation(self, serially: bool | None = None) -> Any:
        """The operation's result, once its context's `before_run` allows it to run (an
        Idempotency-Key's claim, asked here when its variables are coerced): an empty
        result when it does not."""
        context = self.context_value
        if isinstance(context, RequestContext) and context.before_run is not None:
            return self._run_if_allowed(context, serially)
        return self.run_operation(serially)

    def run_operation(self, serially: bool | None) -> Any:
        """Runs the operation: graphql-core's execute_operation."""
        return super().execute_operation(serially)

    async def _run_if_allowed(self, context: RequestContext, serially: bool | None) -> Any:
        if not await context.may_run(self.operation.operation):
            self.release()
            return ExecutionResult(data=None)
        result = self.run_operation(serially)
        return await result if isawaitable(result) else result

    def build_response(self, data: dict[str, Any] | None) -> Any:
        """The result, once the operation has run: the executor lets go of its helpers."""
        try:
            return super().build_response(data)
        finally:
            self.release()

    def release(self) -> None:
        """Drops the helpers graphql-core gave the executor, once it has run: they hold its
        own bound methods, a cycle that would keep it and the request's context until the
        cycle collector runs."""
        self.__dict__.pop("async_helpers", None)


def _variable_error(error: GraphQLError) -> GraphQLError:
    """The error with code BAD_USER_INPUT and without the exception it wraps (whose
    message graphql-core has already put in its own)."""
    return GraphQLError(
        error.message,
        error.nodes,
        error.source,
        error.positions,
        extensions={**(error.extensions or {}), "code": _BAD_USER_INPUT},
    )

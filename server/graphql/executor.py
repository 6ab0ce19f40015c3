"""graphql-core's executor as every operation runs with it: errors in the variables' values
(a wrong type, an Int out of 32 bits, an unknown enum value, an input object missing a field)
are the client's, BAD_USER_INPUT, rather than errors wrapping an exception (INTERNAL); and
an executor that has run holds no reference cycle."""

from __future__ import annotations

from typing import Any

from graphql import DocumentNode, GraphQLError, GraphQLSchema, get_operation_ast
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

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

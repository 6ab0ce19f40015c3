"""Every operation's preparation in one schema-extension hook: parse (token-limited),
validate (with the depth and alias rule), check each `first` argument and record the
operation's name for the request log.

Strawberry runs each extension hook through its own context manager, built anew for every
request; one hook in place of five (three for the limits and the parse cache, one for the
validation cache, one to record the name) takes about a tenth off a small query's CPU
time. A query text is parsed, validated and searched for `first` arguments once, then served
from a cache keyed by the text itself (a string hashes once; a document's hash walks its
whole tree). Validation errors, or a `first` over the limit, are handed to Strawberry as the
validation result, so the order of checks a client sees is unchanged: syntax and size, then
the operation type allowed for the HTTP method, then validation, then `first`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from graphql import (
    DocumentNode,
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
    ValidationRule,
    validate,
)
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionContext

from server.edge.http import RequestContext
from server.graphql.limits import (
    FirstArgument,
    check_first,
    complexity_rule,
    first_arguments,
    parse_limited,
)
from server.settings import Limits

_CACHE_SIZE = 512


class Prepared:
    """A query text parsed and validated, with its `first` arguments found per operation."""

    def __init__(self, document: DocumentNode, errors: list[GraphQLError]) -> None:
        self.document = document
        self.errors = errors
        self._names = {
            d.name.value
            for d in document.definitions
            if isinstance(d, OperationDefinitionNode) and d.name is not None
        }
        self._firsts: dict[str | None, list[FirstArgument]] = {}

    def firsts(self, operation_name: str | None) -> list[FirstArgument]:
        """The `first` arguments of the operation to run; none for a name the document does
        not define (execution reports it), which is not remembered: clients choose names."""
        if operation_name is not None and operation_name not in self._names:
            return []
        found = self._firsts.get(operation_name)
        if found is None:
            found = self._firsts[operation_name] = first_arguments(self.document, operation_name)
        return found


@lru_cache(maxsize=_CACHE_SIZE)
def prepare(
    schema: GraphQLSchema, query: str, rules: tuple[type[ValidationRule], ...], max_tokens: int
) -> Prepared:
    """The query parsed (GraphQLError when it is too long or no GraphQL) and validated."""
    document = parse_limited(query, max_tokens)
    return Prepared(document, validate(schema, document, rules))


def _errors(context: ExecutionContext, prepared: Prepared, max_first: int) -> list[GraphQLError]:
    """Validation errors, or else a `first` over the limit: what stops the operation."""
    if prepared.errors:
        return prepared.errors
    try:
        check_first(prepared.firsts(context.operation_name), context.variables or {}, max_first)
    except GraphQLError as error:
        return [error]
    return []


def prepare_extension(limits: Limits) -> type[SchemaExtension]:
    """The schema extension class preparing operations under `limits`."""
    rule = complexity_rule(limits.max_depth, limits.max_aliases)

    class PrepareOperation(SchemaExtension):
        def on_parse(self) -> Iterator[None]:
            context = self.execution_context
            if context.graphql_document is None and context.query is not None:
                rules = (*context.validation_rules, rule)
                prepared = prepare(context.schema._schema, context.query, rules, limits.max_tokens)
                context.graphql_document = prepared.document
                context.pre_execution_errors = _errors(context, prepared, limits.max_first)
                if isinstance(context.context, RequestContext):
                    context.context.operation_name = context.operation_name
            yield

    return PrepareOperation

"""Every operation's preparation in one schema-extension hook: parse (length- and
token-limited), check depth, aliases, fields and same-key pairs (before validation, whose
rules are slow on a document these refuse), validate, count the variables' values, check
each `first` argument, estimate the cost
against the per-request limit, take it from the tenant's budget, and record the operation's
name for the request log.

Strawberry runs each extension hook through its own context manager, built anew for every
request; one hook in place of five (three for the limits and the parse cache, one for the
validation cache, one to record the name) takes about a tenth off a small query's CPU
time. A query text is parsed, validated and searched for `first` arguments once, then served
from a cache keyed by the text itself (a string hashes once; a document's hash walks its
whole tree); a text that differs from a prepared one only in its literals is served by the
document they were normalised out of (keygraph/serve/literals.py), and any error it meets
before execution sends it back to be prepared as written. Validation errors, or a `first`
over the limit, are handed to Strawberry as the validation result, so the order of checks a
client sees is: syntax and size, then the operation type allowed for the HTTP method, then
validation, then `first`, then cost, then the tenant's budget. Nothing has touched the store
by then.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from graphql import (
    ASTValidationRule,
    DocumentNode,
    FragmentDefinitionNode,
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
    get_operation_ast,
    specified_rules,
    validate,
)
from strawberry.extensions import SchemaExtension

from keygraph.api.shape import Estimate
from keygraph.caller import Caller
from keygraph.serve import literals
from keygraph.serve.budget import throttled
from keygraph.serve.document_cache import DocumentCache
from keygraph.serve.document_size import check_size
from keygraph.serve.limits import check_variables, over_cost, parse_limited
from server.graphql.context import RequestContext
from server.graphql.cost import CALLER_ARGUMENTS, cost_variables, estimate
from server.graphql.limits import FirstArgument, check_first, first_arguments
from server.settings import Limits

_LONGEST_KEPT = 1024
"""Characters of variable values an estimate is remembered under, at most."""
_ESTIMATES_KEPT = 64
"""Estimates a prepared query keeps, one per value of its cost's variables."""


class Prepared:
    """A query text parsed and validated, with its `first` arguments found per operation."""

    def __init__(self, document: DocumentNode, errors: list[GraphQLError]) -> None:
        self.document = document
        self.errors = errors
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self._names = {
            d.name.value
            for d in document.definitions
            if isinstance(d, OperationDefinitionNode) and d.name is not None
        }
        self._firsts: dict[str | None, list[FirstArgument]] = {}
        self._cost_variables = cost_variables(document)
        self._caller_variables = cost_variables(document, CALLER_ARGUMENTS)
        self._estimates: dict[tuple[object, ...], Estimate] = {}

    def firsts(self, operation_name: str | None) -> list[FirstArgument]:
        """The `first` arguments of the operation to run; none for a name the document does
        not define (execution reports it), which is not remembered: clients choose names."""
        if operation_name is not None and operation_name not in self._names:
            return []
        found = self._firsts.get(operation_name)
        if found is None:
            found = self._firsts[operation_name] = first_arguments(self.document, operation_name)
        return found

    def estimate(
        self,
        schema: GraphQLSchema,
        operation: OperationDefinitionNode,
        name: str | None,
        variables: dict[str, Any],
        caller: Caller | None = None,
    ) -> Estimate | None:
        """The operation's cost (cost.estimate), remembered per value of the variables a cost
        can depend on (`first` and `if` arguments): other variables, ids for instance, do not
        change it. An estimate is only remembered once one was made: variables that do not
        coerce give none, and the next request makes its own. The estimate for a `caller`
        who may not read everything counts what it may read, which depends on who it is and
        on the ids and dates it asks with too: it is remembered per caller and their values."""
        names = self._cost_variables if caller is None else self._caller_variables
        values = [variables.get(v) for v in names]
        if any(isinstance(value, list | dict) for value in values):
            return None  # never an Int or Boolean, maybe too deep to repr: execution says so
        given = [repr(value) for value in values]
        key: tuple[object, ...] = (name, *given)
        if caller is not None:
            if sum(map(len, given)) > _LONGEST_KEPT:  # hostile ids: not worth keeping
                return estimate(schema, operation, self.fragments, variables, caller)
            key += (caller.subject, caller.roles, tuple(sorted(caller.claims.items())))
        found = self._estimates.get(key)
        if found is None:
            found = estimate(schema, operation, self.fragments, variables, caller)
            if found is not None:
                if len(self._estimates) >= _ESTIMATES_KEPT:
                    self._estimates.clear()
                self._estimates[key] = found
        return found


def prepare(
    schema: GraphQLSchema, query: str, rules: tuple[type[ASTValidationRule], ...], limits: Limits
) -> Prepared:
    """The query parsed (GraphQLError when it is too long or no GraphQL) and validated,
    unless it is over the depth, alias, field or pair limit (QUERY_TOO_COMPLEX, not
    validated)."""
    document = parse_limited(query, limits.max_tokens, limits.max_document)
    errors = check_size(document, limits)
    return Prepared(document, errors or validate(schema, document, rules))


@dataclass(frozen=True, slots=True)
class Resolved:
    """A request's document prepared, with the variables it runs with: the client's, and
    when its literals were normalised (`binding`), one for each of them too. `cache` says
    how it was found: under its text, under its shape, or prepared now."""

    prepared: Prepared
    variables: dict[str, Any]
    binding: literals.Binding | None
    cache: str


class Preparation:
    """How operations are prepared under one set of limits: by the schema extension on
    Strawberry's path, and directly on compiled execution's (server/edge/fast_path.py).
    Its cache holds documents by their text, and normalised documents by their shape."""

    def __init__(self, limits: Limits, normalise: bool = True) -> None:
        self.limits = limits
        self.rules = tuple(specified_rules)
        self.cache = DocumentCache(limits.document_cache_entries, limits.document_cache_chars)
        self.normalise = normalise
        """Whether literals are normalised into variables (off: every text is its own)."""

    def prepared(self, schema: GraphQLSchema, query: str) -> Prepared:
        """The query parsed and validated as written (cached); GraphQLError when it cannot
        be parsed."""
        found: Prepared | None = self.cache.get(query)
        if found is None:
            found = prepare(schema, query, self.rules, self.limits)
            self.cache.put(query, found, len(query))
        return found

    def resolve(
        self, schema: GraphQLSchema, query: str, variables: dict[str, Any] | None
    ) -> Resolved:
        """The query's document and variables: the text's own when it is cached, else its
        shape's with its literals as variables, else the text prepared now (GraphQLError
        when it cannot be parsed)."""
        given = variables or {}
        cache = self.cache
        found: Prepared | None = cache.get(query)
        if found is not None:
            return Resolved(found, given, None, "text")
        if self.normalise:
            resolved = self._by_shape(schema, query, given)
            if resolved is not None:
                return resolved
        return Resolved(self.prepared(schema, query), given, None, "prepared")

    def _by_shape(
        self, schema: GraphQLSchema, query: str, variables: dict[str, Any]
    ) -> Resolved | None:
        """The query as its shape's normalised document, the shape made now from the query
        when it is new; None when the query is prepared as written."""
        if len(query) > self.limits.max_document:
            return None  # refused as written, before it is read
        found = literals.split(query)
        if found is None:
            return None
        key = (found.key,)
        entry: tuple[literals.Shape, Prepared | None] | None = self.cache.get(key)
        made = entry is None
        if entry is None:
            try:
                original = prepare(schema, query, self.rules, self.limits)
            except GraphQLError:
                return None
            if original.errors:
                self.cache.put(query, original, len(query))
                return None
            shape = literals.normalise(schema, self.rules, query, found, original.document)
            normalised = None if shape.document is None else Prepared(shape.document, [])
            entry = (shape, normalised)
            self.cache.put(key, entry, len(query))
            if normalised is None:
                self.cache.put(query, original, len(query))
        shape, normalised = entry
        if normalised is None:
            return None
        binding = shape.bind(query, found, variables)
        if binding is None:
            return None
        return Resolved(normalised, binding.variables, binding, "prepared" if made else "shape")

    def screened(
        self,
        schema: GraphQLSchema,
        query: str,
        resolved: Resolved,
        name: str | None,
        variables: dict[str, Any] | None,
        caller: Caller | None,
    ) -> tuple[Resolved, list[GraphQLError], Estimate | None]:
        """What `screen` finds for the resolved document; when a normalised one meets any
        error, the query is prepared and screened as written, so that the client sees the
        errors of its own text."""
        errors, found = self.screen(schema, resolved.prepared, name, resolved.variables, caller)
        if errors and resolved.binding is not None:
            given = variables or {}
            resolved = Resolved(self.prepared(schema, query), given, None, "prepared")
            errors, found = self.screen(schema, resolved.prepared, name, given, caller)
        return resolved, errors, found

    def variables_error(self, variables: dict[str, Any] | None) -> GraphQLError | None:
        """QUERY_TOO_COMPLEX when the variables hold too many values to coerce."""
        return check_variables(variables or {}, self.limits.max_variable_values)

    def screen(
        self,
        schema: GraphQLSchema,
        prepared: Prepared,
        name: str | None,
        variables: dict[str, Any],
        caller: Caller | None,
    ) -> tuple[list[GraphQLError], Estimate | None]:
        """What stops the operation before any budget is asked (validation errors, else too
        many variable values, else a `first` over the limit, else QUERY_TOO_COMPLEX over the
        per-request limit), and its cost estimate for `caller` (None: one who reads all)."""
        if prepared.errors:
            return prepared.errors, None
        too_many = self.variables_error(variables)
        if too_many is not None:
            return [too_many], None
        try:
            check_first(prepared.firsts(name), variables, self.limits.max_first)
        except GraphQLError as error:
            # kept as a value: without its traceback, whose frames would hold it in a cycle
            return [error.with_traceback(None)], None
        operation = get_operation_ast(prepared.document, name)
        if operation is None:
            return [], None  # execution reports the missing or ambiguous operation
        found = prepared.estimate(schema, operation, name, variables, caller)
        if found is None:
            return [], None  # execution reports the variables
        if found.cost > self.limits.max_cost:
            return [over_cost(found.cost, self.limits.max_cost)], found
        return [], found

    async def admit(
        self,
        schema: GraphQLSchema,
        query: str,
        resolved: Resolved,
        name: str | None,
        variables: dict[str, Any] | None,
        ctx: RequestContext,
    ) -> tuple[Resolved, list[GraphQLError]]:
        """The document to run, and what stops it: what `screen` finds, else a subscription
        (served over WebSocket, by server/realtime), else THROTTLED when the tenant's budget
        does not hold the cost. The name, estimate, admission and how the document was found
        are left on `ctx`."""
        ctx.operation_name = name
        caller = None if ctx.unrestricted else ctx.caller
        resolved, errors, ctx.estimate = self.screened(
            schema, query, resolved, name, variables, caller
        )
        ctx.literals = resolved.binding
        if ctx.document_cache is None:  # else compiled execution found it first, then declined
            ctx.document_cache = resolved.cache
        if not errors and _is_subscription(resolved.prepared.document, name):
            return resolved, [GraphQLError(OVER_WEBSOCKET, extensions={"code": "BAD_REQUEST"})]
        return resolved, errors or await charge(ctx)


OVER_WEBSOCKET = "subscriptions are served over WebSocket (graphql-transport-ws) at /graphql"


def _is_subscription(document: DocumentNode, name: str | None) -> bool:
    operation = get_operation_ast(document, name)
    return operation is not None and operation.operation is OperationType.SUBSCRIPTION


async def charge(ctx: RequestContext) -> list[GraphQLError]:
    """THROTTLED when the tenant's budget does not hold the estimate left on `ctx` (nothing
    is taken then); the admission is left on `ctx`."""
    found = ctx.estimate
    if ctx.budget is None or found is None:
        return []
    admission = ctx.admission = await ctx.budget.admit(ctx.tenant, found.cost)
    return [] if admission.admitted else [throttled(admission, found.cost)]


def prepare_extension(preparation: Preparation) -> type[SchemaExtension]:
    """The schema extension class preparing Strawberry's operations by `preparation`."""

    class PrepareOperation(SchemaExtension):
        async def on_parse(self) -> AsyncIterator[None]:
            context = self.execution_context
            if context.graphql_document is None and context.query is not None:
                schema, query = context.schema._schema, context.query
                ctx = context.context
                if isinstance(ctx, RequestContext):
                    variables = context.variables
                    resolved = preparation.resolve(schema, query, variables)
                    # Strawberry names an unnamed request's operation from its document
                    context.graphql_document = resolved.prepared.document
                    resolved, errors = await preparation.admit(
                        schema, query, resolved, context.operation_name, variables, ctx
                    )
                    if resolved.binding is not None:
                        context.variables = resolved.variables
                    document = resolved.prepared.document
                else:
                    prepared = preparation.prepared(schema, query)
                    document, errors = prepared.document, prepared.errors
                context.graphql_document = document
                context.pre_execution_errors = errors
            yield

    return PrepareOperation

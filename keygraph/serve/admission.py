"""Whether an operation may run, decided before anything is read, for HTTP and WebSocket
alike, as the repository's server decides it: a document bounded before it is parsed
(characters, tokens: limits.py) and before it is validated (depth, aliases, fields and
pairs of fields, fragments counted each time they are spread, and at most
`max_root_fields` root fields: document_size.py), one that does not parse or validate
refused, variables holding at most `max_variable_values` values before they are coerced, a
cost of at most `max_cost` (the most items its answer can hold: keygraph.api.cost) before
the operation is planned, then the cost taken from the tenant's budget. A document sent by
its hash is found first (persisted.py). A text new to the worker whose shape is not (its
literals lifted into variables: literals.py) runs as its shape's document with its own
literals as values; its answer is the text's as written, its errors located in it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from graphql import (
    DocumentNode,
    GraphQLError,
    OperationDefinitionNode,
    OperationType,
    get_operation_ast,
    specified_rules,
    validate,
)
from graphql.execution import Executor

from keygraph.api.run import formatted
from keygraph.api.shape import Estimate
from keygraph.execution.executor import CompiledExecutor
from keygraph.execution.operation import build_executor

from . import literals, persisted
from .budget import throttled
from .document_size import check_size
from .limits import MAX_VALIDATION_ERRORS, check_variables, over_cost, parse_limited
from .served import Served

ALLOWED = "GET, HEAD, POST"
"""The methods /graphql takes over HTTP."""
_RULES = tuple(specified_rules)
"""The rules a document is validated by, its shape's normalised one too."""


@dataclass(frozen=True, slots=True)
class Admitted:
    document: DocumentNode
    operation: OperationDefinitionNode
    executor: Executor[Any] | None
    """Its executor, variables coerced and no context yet; None when they do not coerce
    (execution reports them)."""
    estimate: Estimate | None
    """Its cost and its answer's shape; None when its variables do not coerce."""
    charged: bool
    """Whether its cost was taken from the tenant's budget (what it does not use goes back)."""
    found: str
    """How its document was found: `prepared` for it, or by its `text` or its `shape`."""
    variables: dict[str, Any] | None = None
    """The variables it runs with: the client's, and its literals' when found by shape."""
    binding: literals.Binding | None = field(default=None, repr=False)
    """Its literals as variables of its shape's document, when it was found by shape."""

    def located(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        """The errors of its execution, located in the request's own text."""
        return errors if self.binding is None else self.binding.rebase(errors)


@dataclass(frozen=True, slots=True)
class Refused:
    """The refusal: its HTTP status, its errors, and headers to send with it; the operation
    refused, when the document parsed and holds the one asked for (the request log names it)."""

    status: int
    errors: list[dict[str, Any]]
    headers: dict[str, str] = field(default_factory=dict)
    operation: OperationDefinitionNode | None = None
    parsed: DocumentNode | None = field(default=None, repr=False)
    """The document, when it parsed and was refused after (by validation, its size)."""
    estimate: Estimate | None = None
    """The operation's cost, when it was known before it was refused."""
    found: str | None = None
    """How its document was found, when it parsed and validated."""


def refused(status: int, code: str, message: str, **extensions: Any) -> Refused:
    """A refusal of one error, `code` and `extensions` in its extensions."""
    return Refused(status, [{"message": message, "extensions": {"code": code, **extensions}}])


async def admit(
    served: Served,
    tenant: str,
    query: str,
    variables: dict[str, Any] | None,
    name: str | None,
    allowed: frozenset[OperationType],
) -> Admitted | Refused:
    """The operation, admitted to run for `tenant`, or why not; one whose type is not
    `allowed` is 405 (a mutation sent with GET: its Allow header names POST). One found by
    its shape whose variables do not coerce is prepared as written, so that execution
    reports the client's own document."""
    found = _prepared(served, query, variables)
    screened = _screened(served, found, name, variables, allowed)
    if isinstance(screened, Admitted) and screened.executor is None and found.binding is not None:
        found = _Found(_as_written(served, query), None, "prepared")
        screened = _screened(served, found, name, variables, allowed)
    if isinstance(screened, Refused) or served.budget is None or screened.estimate is None:
        return screened
    admission = await served.budget.admit(tenant, screened.estimate.cost)
    if not admission.admitted:
        headers = {"Retry-After": str(admission.retry_after)}
        errors = [dict(throttled(admission, screened.estimate.cost).formatted)]
        refusal = Refused(429, errors, headers, estimate=screened.estimate)
        return replace(refusal, operation=screened.operation, found=screened.found)
    return replace(screened, charged=True)


@dataclass(frozen=True, slots=True)
class _Found:
    """A request's document, parsed and valid, or why it is refused; with its literals as
    variables when it is its shape's document, and how it was found."""

    document: DocumentNode | Refused
    binding: literals.Binding | None
    how: str


def _screened(
    served: Served,
    found: _Found,
    name: str | None,
    variables: dict[str, Any] | None,
    allowed: frozenset[OperationType],
) -> Admitted | Refused:
    """The operation found in the document, with its cost, or why it may not run; its
    cost is not yet taken from the budget."""
    document = found.document
    if isinstance(document, Refused):
        if document.parsed is None:
            return document
        return replace(document, operation=get_operation_ast(document.parsed, name))
    operation = get_operation_ast(document, name)
    if operation is None:
        error = GraphQLError("no operation of that name, or several without one")
        return Refused(400, [formatted(error)], found=found.how)
    if operation.operation not in allowed:
        kind = operation.operation.value
        refusal = refused(405, "BAD_REQUEST", f"a {kind} is not taken here")
        mutation = operation.operation is OperationType.MUTATION
        headers = {"Allow": "POST" if mutation else ALLOWED}
        return replace(refusal, headers=headers, operation=operation, found=found.how)
    too_many = check_variables(variables or {}, served.max_variable_values)
    if too_many is not None:  # before they are coerced
        return Refused(400, [formatted(too_many)], operation=operation, found=found.how)
    bound = variables if found.binding is None else found.binding.variables
    runner: type[Executor[Any]] = CompiledExecutor if served.compiled else Executor
    executor = build_executor(runner, served.schema, document, name, bound)
    estimate = None
    if executor is not None:
        estimate = served.estimates.estimate(
            served.schema,
            document,
            executor.operation,
            executor.fragments,
            executor.variable_values,
        )
    if estimate is not None and estimate.cost > served.max_cost:  # before it is planned
        too_complex = Refused(400, [formatted(over_cost(estimate.cost, served.max_cost))])
        return replace(too_complex, estimate=estimate, operation=operation, found=found.how)
    return Admitted(document, operation, executor, estimate, False, found.how, bound, found.binding)


def persisted_query(served: Served, data: dict[str, Any]) -> str | Refused | None:
    """The text a request (`data`, its JSON) runs when it names a persisted document, why it
    must not run, or None when its own `query` runs as it is (persisted.resolve)."""

    def runs(text: str) -> bool:
        return not isinstance(prepared(served, text), Refused)

    resolved = persisted.resolve(data, served.persisted, runs)
    if isinstance(resolved, persisted.Refusal):
        return refused(resolved.status, resolved.code, resolved.message)
    return resolved


def prepared(served: Served, query: str) -> DocumentNode | Refused:
    """The document of `query`, parsed and valid (from the cache when it, or its shape,
    was before), or why it is refused."""
    return _prepared(served, query, None).document


def _prepared(served: Served, query: str, variables: dict[str, Any] | None) -> _Found:
    """`prepared`, and how: found by its `text`; by its `shape`, its literals then bound
    after the client's `variables`; or `prepared` now. The first valid document of a shape
    is kept by its shape alone; a text its shape cannot take is kept by its text."""
    cache = served.documents
    document: DocumentNode | None = cache.get(query)
    if document is not None:
        return _Found(document, None, "text")
    split = literals.split(query) if len(query) <= served.max_document else None
    shape: literals.Shape | None = None
    if split is not None:
        shape = cache.get((split.key,))
        if shape is not None and shape.document is not None:
            binding = shape.bind(query, split, variables or {})
            if binding is not None:
                return _Found(shape.document, binding, "shape")
    checked = _checked(served, query)
    if isinstance(checked, Refused):
        return _Found(checked, None, "prepared")
    if split is not None and shape is None:
        shape = literals.normalise(served.schema, _RULES, query, split, checked)
        cache.put((split.key,), shape, len(query))
        if shape.document is not None:
            return _Found(checked, None, "prepared")
    cache.put(query, checked, len(query))
    return _Found(checked, None, "prepared")


def _as_written(served: Served, query: str) -> DocumentNode | Refused:
    """The document of `query` as written, kept by its text."""
    checked = _checked(served, query)
    if not isinstance(checked, Refused):
        served.documents.put(query, checked, len(query))
    return checked


def _checked(served: Served, query: str) -> DocumentNode | Refused:
    """The document, parsed and valid for the schema, or why not; one over a limit of its
    size is not validated, whose work grows with the pairs of fields it compares."""
    try:
        document = parse_limited(query, served.max_tokens, served.max_document)
    except GraphQLError as exc:
        return Refused(400, [formatted(exc)])
    errors = check_size(document, served, served.max_root_fields)
    if not errors:
        errors = validate(served.schema, document, max_errors=MAX_VALIDATION_ERRORS)
    if errors:
        return Refused(400, [formatted(e) for e in errors], parsed=document)
    return document

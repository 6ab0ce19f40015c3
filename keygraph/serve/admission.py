"""Whether an operation may run, decided before anything is read, for HTTP and WebSocket
alike: a document bounded before it is parsed (characters, tokens) and validated (fields,
fragments counted each time they are spread), one that does not parse or validate refused,
at most `max_root_fields` root fields (aliases and fragments counted), a cost of at most
`max_cost` (the most items its answer can hold: keygraph.api.cost), then the cost taken
from the tenant's budget. A document sent by its hash is found first (persisted.py)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    get_operation_ast,
    parse,
    validate,
)
from graphql.execution import Executor

from keygraph.api.run import formatted
from keygraph.api.shape import Estimate
from keygraph.execution.executor import CompiledExecutor
from keygraph.execution.operation import build_executor

from . import persisted
from .budget import throttled
from .served import Served


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
    """How its document was found: `prepared` for it, or by its `text`."""


@dataclass(frozen=True, slots=True)
class Refused:
    """The refusal: its HTTP status, its errors, and headers to send with it."""

    status: int
    errors: list[dict[str, Any]]
    headers: dict[str, str] = field(default_factory=dict)
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
    `allowed` is 405 (a mutation sent with GET)."""
    document, found = _prepared(served, query)
    if isinstance(document, Refused):
        return document
    operation = get_operation_ast(document, name)
    if operation is None:
        error = GraphQLError("no operation of that name, or several without one")
        return Refused(400, [formatted(error)], found=found)
    if operation.operation not in allowed:
        kind = operation.operation.value
        return replace(refused(405, "BAD_REQUEST", f"a {kind} is not taken here"), found=found)
    roots = _root_fields(document, operation.selection_set, set())
    if roots > served.max_root_fields:
        message = f"{roots} root fields; at most {served.max_root_fields} an operation"
        return replace(refused(400, "QUERY_TOO_COMPLEX", message), found=found)
    runner: type[Executor[Any]] = CompiledExecutor if served.compiled else Executor
    executor = build_executor(runner, served.schema, document, name, variables)
    estimate = None
    if executor is not None:
        estimate = served.estimates.estimate(
            served.schema,
            document,
            executor.operation,
            executor.fragments,
            executor.variable_values,
        )
    if estimate is None:
        return Admitted(document, operation, executor, None, False, found)
    cost = estimate.cost
    if cost > served.max_cost:
        message = f"costs {cost} (the most items its answer can hold); at most {served.max_cost}"
        too_complex = refused(400, "QUERY_TOO_COMPLEX", message, cost=cost, limit=served.max_cost)
        return replace(too_complex, estimate=estimate, found=found)
    if served.budget is None:
        return Admitted(document, operation, executor, estimate, False, found)
    admission = await served.budget.admit(tenant, cost)
    if not admission.admitted:
        headers = {"Retry-After": str(admission.retry_after)}
        errors = [dict(throttled(admission, cost).formatted)]
        return Refused(429, errors, headers, estimate, found)
    return Admitted(document, operation, executor, estimate, True, found)


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
    """The document of `query`, parsed and valid (from the cache when it was before), or why
    it is refused."""
    return _prepared(served, query)[0]


def _prepared(served: Served, query: str) -> tuple[DocumentNode | Refused, str]:
    """`prepared`, and how: found by its `text`, or `prepared` now."""
    document: DocumentNode | None = served.documents.get(query)
    if document is not None:
        return document, "text"
    checked = _checked(served, query)
    if not isinstance(checked, Refused):
        served.documents.put(query, checked, len(query))
    return checked, "prepared"


def _checked(served: Served, query: str) -> DocumentNode | Refused:
    """The document, parsed and valid for the schema, or why not."""
    if len(query) > served.max_document:
        message = f"a document is at most {served.max_document} characters"
        return refused(400, "QUERY_TOO_COMPLEX", message)
    try:
        document = parse(query, max_tokens=served.max_tokens)
    except GraphQLError as exc:
        return Refused(400, [formatted(exc)])
    selected = _fields_selected(document)
    if selected > served.max_fields:  # before validation, which compares fields in pairs
        message = f"{selected} fields, fragments counted each time they are spread; "
        message += f"at most {served.max_fields}"
        return refused(400, "QUERY_TOO_COMPLEX", message)
    invalid = validate(served.schema, document)
    if invalid:
        return Refused(400, [formatted(e) for e in invalid])
    return document


def _fields_selected(document: DocumentNode) -> int:
    """The fields every operation of the document selects, a fragment's fields counted each
    time it is spread, in time linear in the document (each fragment counted once)."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    counted: dict[str, int] = {}

    def count(selection: SelectionSetNode | None, visiting: frozenset[str]) -> int:
        total = 0
        for node in selection.selections if selection is not None else ():
            if isinstance(node, FieldNode):
                total += 1 + count(node.selection_set, visiting)
            elif isinstance(node, InlineFragmentNode):
                total += count(node.selection_set, visiting)
            elif isinstance(node, FragmentSpreadNode):
                name = node.name.value
                fragment = fragments.get(name)
                if fragment is None or name in visiting:
                    continue  # unknown or cyclic: validation refuses it
                if name not in counted:
                    counted[name] = count(fragment.selection_set, visiting | {name})
                total += counted[name]
        return total

    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    return sum(count(op.selection_set, frozenset()) for op in operations)


def _root_fields(document: DocumentNode, selection: SelectionSetNode, seen: set[str]) -> int:
    """The root fields an operation selects, each alias and each fragment's counted (a
    fragment spread twice at the root counts once: its fields merge)."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    count = 0
    for node in selection.selections:
        if isinstance(node, FieldNode):
            count += 1
        elif isinstance(node, InlineFragmentNode):
            count += _root_fields(document, node.selection_set, seen)
        elif isinstance(node, FragmentSpreadNode) and node.name.value not in seen:
            seen.add(node.name.value)
            fragment = fragments.get(node.name.value)
            if fragment is not None:
                count += _root_fields(document, fragment.selection_set, seen)
    return count

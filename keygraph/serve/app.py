"""Any generated package's API over HTTP, as GraphQL-over-HTTP asks: POST JSON, or GET for a
query, answered `application/graphql-response+json`. The tenant and caller come only from
the bearer token (401 UNAUTHENTICATED without a valid one); a body is capped before it is
read (413); a document is bounded before it is parsed (characters, tokens) and validated
(fields, fragments counted each time they are spread); one that does not parse or validate
is 400; an operation selects at most
`max_root_fields` root fields (aliases and fragments counted) and costs at most `max_cost`,
the most items its answer can hold (keygraph.api.cost: pages of relations multiply), else
400 QUERY_TOO_COMPLEX before anything is read; the cost is then taken from the tenant's
budget (keygraph.serve.budget), else 429 THROTTLED with Retry-After. A browser asking for
/graphql (Accept: text/html) gets GraphiQL (keygraph.serve.graphiql), offline."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from inspect import isawaitable
from typing import Any

import orjson
from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    execute,
    get_operation_ast,
    parse,
    validate,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from keygraph.api import ApiContext, estimate
from keygraph.api.run import formatted
from keygraph.cursor import CursorCodec
from keygraph.store import Session, Store
from keygraph.tokens import TokenError, TokenKey, bearer, verify

from . import graphiql
from .budget import TenantBudget, throttled

MEDIA = "application/graphql-response+json"
MAX_BODY_BYTES = 1024 * 1024
MAX_DOCUMENT = 65_536
"""Characters of a document, checked before it is lexed."""
MAX_TOKENS = 2_000
MAX_FIELDS = 2_500
"""Fields a document selects, each fragment counted each time it is spread: checked before
validation, whose work grows with the pairs of fields it compares."""
MAX_ROOT_FIELDS = 30
MAX_COST = 25_000


@dataclass(frozen=True, slots=True)
class Served:
    """What the app answers with: the package's schema, its store, how tokens are checked,
    the key cursors are signed with, and the limits."""

    schema: GraphQLSchema
    store: Store
    tokens: TokenKey
    cursors: CursorCodec
    max_body_bytes: int = MAX_BODY_BYTES
    max_document: int = MAX_DOCUMENT
    max_tokens: int = MAX_TOKENS
    max_fields: int = MAX_FIELDS
    max_root_fields: int = MAX_ROOT_FIELDS
    max_cost: int = MAX_COST
    """The most items an operation's answer may hold (keygraph.api.cost)."""
    budget: TenantBudget | None = None
    """Each tenant's bucket of cost points; None: no budget."""
    graphiql: bool = True
    dev_authorization: Callable[[], str] | None = None
    """A fresh Authorization header for GraphiQL's page (development only)."""


def _answer(body: Mapping[str, Any], status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type=MEDIA)


def _refused(status: int, code: str, message: str, **extensions: Any) -> Response:
    """An answer of one error, `code` and `extensions` in its extensions."""
    shown = {"code": code, **extensions}
    return _answer({"errors": [{"message": message, "extensions": shown}]}, status)


def create_app(served: Served) -> Starlette:
    """The app: /graphql (and GraphiQL's assets) and /healthz."""

    async def graphql(request: Request) -> Response:
        if request.method == "GET" and "text/html" in request.headers.get("accept", ""):
            return _graphiql(request, served)
        try:
            token = verify(bearer(request.headers.get("authorization")), served.tokens)
        except TokenError as exc:
            return _refused(401, "UNAUTHENTICATED", str(exc))
        params = await _params(request, served.max_body_bytes)
        if isinstance(params, Response):
            return params
        query, variables, name = params
        if len(query) > served.max_document:
            message = f"a document is at most {served.max_document} characters"
            return _refused(400, "QUERY_TOO_COMPLEX", message)
        try:
            document = parse(query, max_tokens=served.max_tokens)
        except GraphQLError as exc:
            return _answer({"errors": [formatted(exc)]}, 400)
        selected = _fields_selected(document)
        if selected > served.max_fields:  # before validation, which compares fields in pairs
            message = f"{selected} fields, fragments counted each time they are spread; "
            message += f"at most {served.max_fields}"
            return _refused(400, "QUERY_TOO_COMPLEX", message)
        invalid = validate(served.schema, document)
        operation = get_operation_ast(document, name)
        if not invalid and operation is None:
            invalid = [GraphQLError("no operation of that name, or several without one")]
        if invalid:
            return _answer({"errors": [formatted(e) for e in invalid]}, 400)
        assert operation is not None
        if request.method == "GET" and operation.operation is not OperationType.QUERY:
            return _refused(405, "BAD_REQUEST", "only queries are sent with GET")
        roots = _root_fields(document, operation.selection_set, set())
        if roots > served.max_root_fields:
            message = f"{roots} root fields; at most {served.max_root_fields} an operation"
            return _refused(400, "QUERY_TOO_COMPLEX", message)
        fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        cost = estimate(served.schema, operation, fragments, variables)
        if cost is not None and cost > served.max_cost:
            message = (
                f"costs {cost} (the most items its answer can hold); at most {served.max_cost}"
            )
            return _refused(400, "QUERY_TOO_COMPLEX", message, cost=cost, limit=served.max_cost)
        if served.budget is not None and cost is not None:
            admission = served.budget.take(token.tenant, cost)
            if not admission.admitted:
                refusal = _answer({"errors": [throttled(admission, cost).formatted]}, 429)
                refusal.headers["Retry-After"] = str(admission.retry_after)
                return refusal
        session = Session(served.store, served.cursors.bound_to(token.caller.subject), token.caller)
        result = execute(
            served.schema,
            document,
            context_value=ApiContext(session, token.tenant),
            variable_values=variables,
            operation_name=name,
        )
        if isawaitable(result):
            result = await result
        errors = [formatted(error) for error in result.errors or ()]
        if result.data is None and all(error.path is None for error in result.errors or ()):
            return _answer({"errors": errors}, 400)  # its variables did not coerce
        body: dict[str, Any] = {"data": result.data}
        if errors:
            body["errors"] = errors
        return _answer(body)

    async def healthz(_request: Request) -> Response:
        return Response("ok")

    routes: list[BaseRoute] = [
        Route("/graphql", graphql, methods=["GET", "POST"]),
        Route("/healthz", healthz),
    ]
    if served.graphiql:
        routes.append(Mount(graphiql.ASSETS_PATH, graphiql.assets()))
    return Starlette(routes=routes)


def _graphiql(request: Request, served: Served) -> Response:
    """GraphiQL's page, its headers holding a development token when the app hands them out."""
    if not served.graphiql:
        return PlainTextResponse("Not Found", status_code=404)
    authorization = served.dev_authorization
    origin = graphiql.websocket_origin(request.url.scheme, request.headers.get("host", ""))
    token = authorization() if authorization is not None else None
    return graphiql.page(request.url.path, token, origin)


async def _params(
    request: Request, limit: int
) -> tuple[str, dict[str, Any] | None, str | None] | Response:
    """The request's query, variables and operation name, or the answer refusing it."""
    if request.method == "GET":
        raw: Any = dict(request.query_params)
        if "variables" in raw:
            try:
                raw["variables"] = orjson.loads(raw["variables"])
            except orjson.JSONDecodeError:
                return _refused(400, "BAD_REQUEST", "variables must be a JSON object")
    else:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            return _refused(413, "REQUEST_TOO_LARGE", f"a body is at most {limit} bytes")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                return _refused(413, "REQUEST_TOO_LARGE", f"a body is at most {limit} bytes")
        try:
            raw = orjson.loads(body)
        except orjson.JSONDecodeError:
            return _refused(400, "BAD_REQUEST", "the body must be a JSON object")
    if not isinstance(raw, dict) or not isinstance(raw.get("query"), str):
        return _refused(400, "BAD_REQUEST", "a request is a JSON object with a query string")
    variables, name = raw.get("variables"), raw.get("operationName")
    if variables is not None and not isinstance(variables, dict):
        return _refused(400, "BAD_REQUEST", "variables must be a JSON object")
    if name is not None and not isinstance(name, str):
        return _refused(400, "BAD_REQUEST", "operationName must be a string")
    return raw["query"], variables, name


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

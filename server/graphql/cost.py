"""What an operation costs, known before it runs: the most objects its response can hold.

Every object-typed field counts one per object it can return, multiplied by the objects its
parent can be. A connection counts its nodes: `first`, or the pattern's default page when
`first` is left out (the connection itself, its edges and pageInfo are free). A list with no
`first` counts at its bound (`LIST_BOUNDS`), which the server also enforces. Fields are
collected as the executor collects them: aliases count each, fragments and inline fragments
are followed, @skip/@include honoured with the operation's variables, and fields merged under
one response key count once. A field of an abstract type (`node`) counts as its costliest
possible type. A mutation field costs `WRITE_COST` more. Introspection is free.

The same walk gives the response's `Shape`: which keys hold counted objects, so the objects a
response actually holds can be counted without knowing its types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotated_types import MaxLen
from graphql import (
    ArgumentNode,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    GraphQLField,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
    VariableNode,
    Visitor,
    get_named_type,
    is_abstract_type,
    is_leaf_type,
    visit,
)
from graphql.execution.collect_fields import (
    FieldDetails,
    FragmentDetails,
    collect_fields,
)
from graphql.execution.values import VariableValues, get_argument_values, get_variable_values
from pydantic import BaseModel

from generated.api import API
from generated.models.order import Order
from keygraph.api import Relation, Root
from keygraph.api.cost import OperationWalk
from keygraph.api.shape import Estimate, Shape
from keygraph.caller import MAX_ROLES, Caller
from keygraph.paging import PageSize
from server.authz.fields import Decision, decide
from server.domain.addresses import MAX_ADDRESSES
from server.domain.org import MAX_CHILDREN, MAX_LEVELS
from server.domain.shops import SHOPS_NEAR_PAGE
from server.errors import ApiError
from server.graphql.ids import from_global_id

WRITE_COST = 10
"""What a mutation field costs besides the objects it returns."""


def _max_items(model: type[BaseModel], name: str) -> int:
    """The `max_length` the spec gives a list attribute (its generated model's bound)."""
    for constraint in model.model_fields[name].metadata:
        if isinstance(constraint, MaxLen):
            return constraint.max_length
    raise ValueError(f"{model.__name__}.{name} has no max_length")


def _page(binding: Root | Relation) -> PageSize:
    """The page sizes of a generated API's root field or relation that pages a query."""
    if binding.page is None:
        raise ValueError(f"{binding.function.__name__} is not a query: it has no pages")
    return binding.page


PAGED_AS: Mapping[tuple[str, str], Root | Relation] = {
    ("Query", "users"): API.roots["users"],
    ("Query", "ordersByStatus"): API.roots["ordersByStatus"],
    ("User", "orders"): API.types["User"].relations["orders"],
    ("Group", "members"): API.types["Group"].relations["members"],
    ("OrgNode", "descendants"): API.types["OrgNode"].relations["descendants"],
    ("User", "groups"): API.types["User"].relations["groups"],
}
"""Connections that page one pattern as a root field or relation of the generated API
(generated/api.py) does: their page sizes are that binding's."""

CONNECTION_PAGES: Mapping[tuple[str, str], PageSize] = {
    where: _page(binding) for where, binding in PAGED_AS.items()
}
"""Connections by (type, field): their nodes count `first`, or the default page."""

FIRST_LISTS: Mapping[tuple[str, str], PageSize] = {
    ("Query", "shopsNear"): SHOPS_NEAR_PAGE,
    ("Query", "orgRoots"): PageSize(MAX_CHILDREN, MAX_CHILDREN),
    ("OrgNode", "children"): PageSize(MAX_CHILDREN, MAX_CHILDREN),
}
"""Lists sized by a `first` argument, at their bound when it is left out."""

LIST_BOUNDS: Mapping[tuple[str, str], int] = {
    ("OrgNode", "ancestors"): MAX_LEVELS - 1,
    ("Order", "items"): _max_items(Order, "items"),
    ("User", "addresses"): MAX_ADDRESSES,
    ("Viewer", "roles"): MAX_ROLES,
}
"""Lists without `first`, at the most items they hold."""


def _is_list(type_: GraphQLOutputType) -> bool:
    while isinstance(type_, GraphQLNonNull):
        type_ = type_.of_type
    return isinstance(type_, GraphQLList)


class _Walk(OperationWalk):
    """One operation's walk, knowing who asks and which user objects it passes through."""

    def __init__(
        self,
        schema: GraphQLSchema,
        operation: OperationDefinitionNode,
        fragments: dict[str, FragmentDetails],
        variables: VariableValues,
        caller: Caller | None = None,
    ) -> None:
        super().__init__(schema, operation, fragments, variables)
        self.caller = caller
        """Who asks, when what it may read is less than everything (None: everything)."""
        self._bound: str | None = None
        """The id of the user the next User object is, when the arguments give it."""
        self._users: list[str | None] = []
        """The user of each User object being walked, innermost last."""
        self._own: list[int] = []
        """Per list of users being walked, the cost of fields only the caller's own user
        may read: at most one user of the list is the caller."""

    def object_cost(
        self, type_: GraphQLNamedType, details: list[FieldDetails]
    ) -> tuple[int, Shape]:
        """The cost of one object of `type_` below itself: its costliest possible type's."""
        shape = Shape(counts=True)
        if not isinstance(type_, GraphQLObjectType) and not is_abstract_type(type_):
            return 0, shape
        runtime = self.schema.get_possible_types(type_) if is_abstract_type(type_) else [type_]
        most = 0
        for candidate in runtime:
            assert isinstance(candidate, GraphQLObjectType)
            cost, inner = self.selection_cost(candidate, self.fields_of(candidate, details))
            most = max(most, cost)
            shape.merge(Shape(True, inner))
        return most, shape

    def selection_cost(
        self, type_: GraphQLObjectType, grouped: dict[str, list[FieldDetails]]
    ) -> tuple[int, dict[str, Shape]]:
        total, shapes = 0, {}
        if type_.name == "User":
            self._users.append(self._bound)
        self._bound = None
        for key, details in grouped.items():
            name = details[0].node.name.value
            definition = type_.fields.get(name)
            if definition is None or name.startswith("__"):
                continue
            cost, shape = self.field_cost(type_, definition, details)
            if shape is not None:
                total += cost
                shapes[key] = shape
        if type_.name == "User":
            self._users.pop()
        return total, shapes

    def _decision(
        self, parent: GraphQLObjectType, node: FieldNode, args: dict[str, Any]
    ) -> Decision:
        """What the caller may read of the field (server/authz/fields.py)."""
        if self.caller is None:
            return Decision.YES
        user = self._users[-1] if parent.name == "User" and self._users else None
        return decide(self.caller, (parent.name, node.name.value), args, user)

    def field_cost(
        self, parent: GraphQLObjectType, definition: GraphQLField, details: list[FieldDetails]
    ) -> tuple[int, Shape | None]:
        named = get_named_type(definition.type)
        if is_leaf_type(named):
            return 0, None
        node: FieldNode = details[0].node
        args = get_argument_values(definition, node, self.variables)
        where = (parent.name, node.name.value)
        decision = self._decision(parent, node, args)
        if decision is Decision.NO:
            return 0, None  # refused before any read: null in the response
        cost, shape = self._field_cost(where, named, definition, details, args)
        if decision is Decision.OWN and self._own:
            self._own[-1] += cost
        return cost, shape

    def _field_cost(
        self,
        where: tuple[str, str],
        named: GraphQLNamedType,
        definition: GraphQLField,
        details: list[FieldDetails],
        args: dict[str, Any],
    ) -> tuple[int, Shape]:
        if where == ("Query", "user"):
            self._bound = _user_id(args.get("id"))
        if where in CONNECTION_PAGES:
            assert isinstance(named, GraphQLObjectType)
            return self.connection_cost(named, details, _size(CONNECTION_PAGES[where], args))
        if where in FIRST_LISTS:
            count = _size(FIRST_LISTS[where], args)
        elif _is_list(definition.type):
            count = LIST_BOUNDS[where]
        else:
            count = 1
        inner, shape = self.object_cost(named, details)
        if _is_list(definition.type):
            shape.item_cost = 1 + inner
        return count * (1 + inner), shape

    def connection_cost(
        self, type_: GraphQLObjectType, details: list[FieldDetails], size: int
    ) -> tuple[int, Shape]:
        """`size` nodes, each counting once per `edges { node }` selected (at least once),
        with what is selected below them."""
        shape = Shape()
        per_node = own = 0
        for edges_key, edges in self.fields_of(type_, details).items():
            if edges[0].node.name.value != "edges":
                continue
            edge_type = get_named_type(type_.fields["edges"].type)
            assert isinstance(edge_type, GraphQLObjectType)
            edge_shape = Shape()
            for node_key, nodes in self.fields_of(edge_type, edges).items():
                if nodes[0].node.name.value != "node":
                    continue
                node_type = get_named_type(edge_type.fields["node"].type)
                self._own.append(0)
                inner, node_shape = self.object_cost(node_type, nodes)
                own += self._own.pop()
                edge_shape.item_cost += 1 + inner
                edge_shape.fields[node_key] = node_shape
            per_node += edge_shape.item_cost
            shape.fields[edges_key] = edge_shape
        # what only the caller's own user may read counts for one node, not for each
        return size * max(1, per_node - own) + min(size, 1) * own, shape


def _user_id(global_id: object) -> str | None:
    """The local id of a User's global id; None for anything else."""
    if not isinstance(global_id, str):
        return None
    try:
        type_name, local = from_global_id(global_id)
    except ApiError:
        return None
    return local if type_name == "User" else None


def _size(page: PageSize, args: dict[str, Any]) -> int:
    first = args.get("first")
    return page.default if first is None else max(0, min(int(first), page.maximum))


def estimate(
    schema: GraphQLSchema,
    operation: OperationDefinitionNode,
    fragments: Mapping[str, FragmentDefinitionNode],
    raw_variables: Mapping[str, Any] | None,
    caller: Caller | None = None,
) -> Estimate | None:
    """The operation's cost and shape; None when its variables do not coerce (execution
    then reports them and runs nothing). With `caller`, only what it may read counts: a
    field its guard refuses before any read costs nothing, and a field only a user's owner
    may read counts once per list of users (one of them at most is the caller)."""
    variables = get_variable_values(
        schema, operation.variable_definitions or (), dict(raw_variables or {})
    )
    if not isinstance(variables, VariableValues):
        return None
    root = schema.get_root_type(operation.operation)
    if root is None:
        return None
    walk = _Walk(
        schema,
        operation,
        {name: FragmentDetails(definition) for name, definition in fragments.items()},
        variables,
        caller,
    )
    grouped = collect_fields(schema, walk.fragments, variables, root, operation).grouped_field_set
    cost, shapes = walk.selection_cost(root, grouped)
    if operation.operation == OperationType.MUTATION:
        cost += WRITE_COST * sum(1 for key in grouped if not key.startswith("__"))
    return Estimate(cost, Shape(False, shapes))


COST_ARGUMENTS = frozenset({"first", "if"})
"""The only arguments a cost depends on: list sizes, and @skip/@include."""
CALLER_ARGUMENTS = COST_ARGUMENTS | {"id", "from", "to"}
"""The arguments the cost for a caller who may not read everything depends on: those and
what its guards read (server/authz/fields.py)."""


def cost_variables(
    document: DocumentNode, arguments: frozenset[str] = COST_ARGUMENTS
) -> tuple[str, ...]:
    """The variables a cost can depend on: those given to one of `arguments` anywhere in
    the document."""
    found: set[str] = set()

    class Finder(Visitor):
        def enter_argument(self, node: ArgumentNode, *_args: Any) -> None:
            if node.name.value in arguments and isinstance(node.value, VariableNode):
                found.add(node.value.name.value)

    visit(document, Finder())
    return tuple(sorted(found))

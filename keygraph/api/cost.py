"""What an operation costs, known before it runs: the most items its answer can hold.

Each field that reads (a root field, a relation, an extension's field: `Read`, which
`executable` puts in the field's extensions) counts its items times one plus what each
item's selection costs: a get one item; a batch get the keys it is given, or for a relation
the most items its list attribute holds, or for a list paged by `first` a query's page; a
query `first`, or its pattern's default page when `first` is left out, for each
`edges { node }` selected (the connection, its edges and pageInfo are free). A
struct is part of its item and costs nothing more. Fields are collected as the executor
collects them: each alias counts, fragments are followed, @skip and @include honoured, and
fields merged under one response key count once; a field of an abstract type counts as its
costliest possible type. The same walk gives the answer's shape (shape.py): where the items
it counts sit."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FragmentDefinitionNode,
    GraphQLField,
    GraphQLList,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    OperationDefinitionNode,
    get_named_type,
    get_nullable_type,
    is_abstract_type,
    is_leaf_type,
)
from graphql.execution.collect_fields import (
    FieldDetails,
    FragmentDetails,
    collect_fields,
    collect_subfields,
)
from graphql.execution.values import VariableValues, get_argument_values, get_variable_values

from keygraph.paging import PageSize

from .bindings import Operation
from .shape import Estimate, Shape

READ = "keygraph.read"
"""The key of a field's extensions that holds its `Read`."""

Grouped = dict[str, list[FieldDetails]]


@dataclass(frozen=True, slots=True)
class Read:
    """How many items a field reads: a query's `page` sizes; a list relation's `most`; a
    list paged by `first` (a batch get with `page`)."""

    operation: Operation
    page: PageSize | None = None
    most: int | None = None


def reads(field: GraphQLField, read: Read) -> GraphQLField:
    """The field, what it reads noted in its extensions for the cost."""
    field.extensions = {**(field.extensions or {}), READ: read}
    return field


class OperationWalk:
    """One operation's walk: the schema, fragments and coerced variables it runs with."""

    def __init__(
        self,
        schema: GraphQLSchema,
        operation: OperationDefinitionNode,
        fragments: dict[str, FragmentDetails],
        variables: VariableValues,
    ) -> None:
        self.schema = schema
        self.operation = operation
        self.fragments = fragments
        self.variables = variables

    def fields_of(self, type_: GraphQLObjectType, details: list[FieldDetails]) -> Grouped:
        return collect_subfields(
            self.schema, self.fragments, self.variables, self.operation, type_, details
        ).grouped_field_set


class _Walk(OperationWalk):
    """The walk that counts the items an operation of a spec's API can read, and where
    they sit in its answer."""

    def object_cost(
        self, type_: GraphQLNamedType, details: list[FieldDetails], counts: bool
    ) -> tuple[int, Shape]:
        """What one object of `type_` costs below itself (its costliest possible type's),
        and its shape: counted when it is an item read (`counts`), not a struct."""
        if is_abstract_type(type_):
            runtime = list(self.schema.get_possible_types(type_))
        elif isinstance(type_, GraphQLObjectType):
            runtime = [type_]
        else:
            return 0, Shape(counts)
        shape, most = Shape(counts), 0
        for candidate in runtime:
            cost, fields = self.selection_cost(candidate, self.fields_of(candidate, details))
            most = max(most, cost)
            shape.merge(Shape(counts, fields))
        return most, shape

    def selection_cost(
        self, type_: GraphQLObjectType, grouped: Grouped
    ) -> tuple[int, dict[str, Shape]]:
        total, shapes = 0, {}
        for key, details in grouped.items():
            definition = type_.fields.get(details[0].node.name.value)
            if definition is None:
                continue
            cost, shape = self.field_cost(definition, details)
            total += cost
            if shape is not None:
                shapes[key] = shape
        return total, shapes

    def field_cost(
        self, definition: GraphQLField, details: list[FieldDetails]
    ) -> tuple[int, Shape | None]:
        named = get_named_type(definition.type)
        if is_leaf_type(named):
            return 0, None
        read: Read | None = (definition.extensions or {}).get(READ)
        if read is None:
            return self.object_cost(named, details, False)  # a struct: part of its item
        args = get_argument_values(definition, details[0].node, self.variables)
        if read.operation == "query":
            assert read.page is not None
            size = _size(read.page, args.get("first"))
            if isinstance(
                get_nullable_type(definition.type), GraphQLList
            ):  # `list`: a page's items
                inner, shape = self.object_cost(named, details, True)
                shape.item_cost = 1 + inner
                return size * (1 + inner), shape
            assert isinstance(named, GraphQLObjectType)
            per_node, shape = self.per_node(named, details)
            return size * per_node, shape
        count = 1
        if read.operation == "batch_get" and read.page is not None:
            count = _size(read.page, args.get("first"))
        elif read.operation == "batch_get":
            count = read.most if read.most is not None else _keys(args)
        inner, shape = self.object_cost(named, details, True)
        if isinstance(get_nullable_type(definition.type), GraphQLList):
            shape.item_cost = 1 + inner
        return count * (1 + inner), shape

    def per_node(
        self, connection: GraphQLObjectType, details: list[FieldDetails]
    ) -> tuple[int, Shape]:
        """What one node of a page costs: one and its selection, for each `edges { node }`
        selected, at least one; and the connection's shape."""
        edge_type = get_named_type(connection.fields["edges"].type)
        assert isinstance(edge_type, GraphQLObjectType)
        node_type = get_named_type(edge_type.fields["node"].type)
        total, shape = 0, Shape()
        for edges_key, edges in self.fields_of(connection, details).items():
            if edges[0].node.name.value != "edges":
                continue
            edge_shape = shape.fields.setdefault(edges_key, Shape())
            for node_key, nodes in self.fields_of(edge_type, edges).items():
                if nodes[0].node.name.value == "node":
                    inner, node_shape = self.object_cost(node_type, nodes, True)
                    edge_shape.item_cost += 1 + inner
                    total += 1 + inner
                    edge_shape.fields[node_key] = node_shape
        return max(1, total), shape


def _size(page: PageSize, first: Any) -> int:
    """The nodes a page holds: `first` (at most the largest page), else the default."""
    return page.default if first is None else max(0, min(int(first), page.maximum))


def _keys(args: dict[str, Any]) -> int:
    """The keys a batch get is given: its one argument's items."""
    given = next(iter(args.values()), None)
    return len(given) if isinstance(given, list | tuple) else 1


def estimate(
    schema: GraphQLSchema,
    operation: OperationDefinitionNode,
    fragments: Mapping[str, FragmentDefinitionNode],
    raw_variables: Mapping[str, Any] | None,
) -> int | None:
    """The operation's cost; None when its variables do not coerce (execution then reports
    them and reads nothing)."""
    variables = get_variable_values(
        schema, operation.variable_definitions or (), dict(raw_variables or {})
    )
    if not isinstance(variables, VariableValues):
        return None
    found = {name: FragmentDetails(definition) for name, definition in fragments.items()}
    estimated = _estimated(schema, operation, found, variables)
    return None if estimated is None else estimated.cost


def _estimated(
    schema: GraphQLSchema,
    operation: OperationDefinitionNode,
    fragments: Mapping[str, FragmentDetails],
    variables: VariableValues,
) -> Estimate | None:
    """The operation's cost and its answer's shape with its variables coerced; None for
    an operation type the schema has no root for."""
    root = schema.get_root_type(operation.operation)
    if root is None:
        return None
    found = dict(fragments)
    walk = _Walk(schema, operation, found, variables)
    grouped = collect_fields(schema, found, variables, root, operation).grouped_field_set
    cost, shapes = walk.selection_cost(root, grouped)
    return Estimate(cost, Shape(False, shapes))


ESTIMATES_KEPT = 1024
"""Estimates a cache keeps, the least recently used dropped first."""


class Estimates:
    """Operations' costs remembered per document, operation and the values of the variables
    a cost can depend on: a top-level argument's number or boolean (`first`, `if`) or list
    length (a batch get's keys). Strings (ids, dates, enum names) and input objects never
    change it, so one document asked with other ids is estimated once."""

    def __init__(self, kept: int = ESTIMATES_KEPT) -> None:
        self.kept = kept
        self._found: OrderedDict[tuple[Any, ...], tuple[DocumentNode, Estimate | None]]
        self._found = OrderedDict()

    def estimate(
        self,
        schema: GraphQLSchema,
        document: DocumentNode,
        operation: OperationDefinitionNode,
        fragments: Mapping[str, FragmentDetails],
        variables: VariableValues,
    ) -> Estimate | None:
        """The operation's cost and its answer's shape, from the cache when it was made
        before."""
        key = (id(document), id(operation), *_cost_values(variables.coerced))
        found = self._found.get(key)
        if found is not None and found[0] is document:
            self._found.move_to_end(key)
            return found[1]
        estimated = _estimated(schema, operation, fragments, variables)
        self._found[key] = (document, estimated)
        while len(self._found) > self.kept:
            self._found.popitem(last=False)
        return estimated


def _cost_values(coerced: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The variables' values a cost can depend on, as keys."""
    values: list[tuple[str, Any]] = []
    for name, value in coerced.items():
        if isinstance(value, list):
            values.append((name, len(value)))
        elif not isinstance(value, str | dict):
            values.append((name, value if value.__hash__ is not None else repr(value)))
    return values

"""The object types an operation can reach from some of the schema's roots, for the tests
that must cover every field or argument of the queries and mutations (subscriptions are
covered by tests/server/realtime/)."""

from __future__ import annotations

from graphql import (
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    get_named_type,
)


def reachable(schema: GraphQLSchema, roots: list[GraphQLObjectType | None]) -> set[str]:
    """The names of the object types reachable from `roots` through fields, interfaces and
    unions."""
    seen: set[str] = set()
    todo: list[GraphQLNamedType] = [root for root in roots if root is not None]
    while todo:
        kind = todo.pop()
        if kind.name in seen:
            continue
        seen.add(kind.name)
        if isinstance(kind, GraphQLInterfaceType | GraphQLUnionType):
            todo += schema.get_possible_types(kind)
        if isinstance(kind, GraphQLObjectType | GraphQLInterfaceType):
            todo += [get_named_type(field.type) for field in kind.fields.values()]
    return {name for name in seen if isinstance(schema.type_map[name], GraphQLObjectType)}

"""The check, as the schema is assembled, that the tables the server keeps by (type, field)
name agree with the schema it serves: every list and connection has its cost bound
(server/graphql/cost.py), every field that reads a pattern its guard
(server/authz/fields.py), and no entry names a field the schema does not have."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping

from graphql import (
    GraphQLField,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    get_named_type,
    is_abstract_type,
    is_leaf_type,
)

from server.authz import fields
from server.graphql import cost

COST = "server/graphql/cost.py"
AUTHZ = "server/authz/fields.py"


class FieldTablesError(Exception):
    """The served schema and the server's tables by (type, field) disagree; the message
    names each field and the table."""


def _bounds() -> dict[str, Mapping[tuple[str, str], object]]:
    """The cost tables by name, as the estimate reads them when it runs."""
    return {
        "CONNECTION_PAGES": cost.CONNECTION_PAGES,
        "FIRST_LISTS": cost.FIRST_LISTS,
        "LIST_BOUNDS": cost.LIST_BOUNDS,
    }


def _schema_fields(schema: GraphQLSchema) -> Iterator[tuple[GraphQLObjectType, str, GraphQLField]]:
    """Every field of the schema's object types, introspection's aside."""
    for type_ in schema.type_map.values():
        if isinstance(type_, GraphQLObjectType) and not type_.name.startswith("__"):
            for name, definition in type_.fields.items():
                yield type_, name, definition


def _bound_table(parent: GraphQLObjectType, definition: GraphQLField) -> str | None:
    """The cost table the field needs an entry in: a connection's page, a list's size by
    `first` or its bound; None for a single value, or the lists inside a connection (its
    field's page bounds them)."""
    if parent.name.endswith(("Connection", "Edge")):
        return None
    if get_named_type(definition.type).name.endswith("Connection"):
        return "CONNECTION_PAGES"
    inner = definition.type
    if isinstance(inner, GraphQLNonNull):
        inner = inner.of_type
    if not isinstance(inner, GraphQLList):
        return None
    return "FIRST_LISTS" if "first" in definition.args else "LIST_BOUNDS"


def _is_node(type_: object) -> bool:
    """Whether the type is an object type implementing Node: an entity with an id."""
    return isinstance(type_, GraphQLObjectType) and any(
        interface.name == "Node" for interface in type_.interfaces
    )


def _reads_a_pattern(parent: GraphQLObjectType, definition: GraphQLField) -> bool:
    """Whether the field reads an access pattern of its own: a root Query field of objects,
    or a field of a Node type giving other Nodes (one, a list or a connection) or an
    interface. A payload's or change's objects, and a Node's own values (Order.items),
    come with their parent."""
    named = get_named_type(definition.type)
    if parent.name == "Query":
        return not is_leaf_type(named)
    return _is_node(parent) and (
        _is_node(named) or is_abstract_type(named) or named.name.endswith("Connection")
    )


def problems(schema: GraphQLSchema) -> list[str]:
    """Each disagreement between the schema and the tables, one line each, by field."""
    found: list[str] = []
    bounds = _bounds()
    present: set[tuple[str, str]] = set()
    wanted: dict[tuple[str, str], str] = {}
    for parent, name, definition in _schema_fields(schema):
        where = (parent.name, name)
        present.add(where)
        table = _bound_table(parent, definition)
        if table is not None:
            wanted[where] = table
            if where not in bounds[table]:
                found.append(f"{parent.name}.{name}: no cost bound in {table} ({COST})")
        guarded = where in fields.FIELD_GUARDS or where in fields.UNGUARDED
        if _reads_a_pattern(parent, definition) and not guarded:
            found.append(
                f"{parent.name}.{name}: reads a pattern, no guard in FIELD_GUARDS ({AUTHZ})"
            )
    for table, entries in bounds.items():
        for type_name, name in entries:
            if (type_name, name) not in present:
                found.append(f"{type_name}.{name}: stale entry in {table} ({COST}): no such field")
            elif (should := wanted.get((type_name, name))) is None:
                found.append(f"{type_name}.{name}: in {table} ({COST}), not a list or connection")
            elif should != table:
                found.append(f"{type_name}.{name}: in {table} ({COST}), belongs in {should}")
    guards: dict[str, Collection[tuple[str, str]]] = {
        "FIELD_GUARDS": fields.FIELD_GUARDS,
        "UNGUARDED": fields.UNGUARDED,
    }
    for table, keys in guards.items():
        for type_name, name in keys:
            if (type_name, name) not in present:
                found.append(f"{type_name}.{name}: stale entry in {table} ({AUTHZ}): no such field")
    return sorted(found)


def check(schema: GraphQLSchema) -> None:
    """Raises FieldTablesError naming every field the tables miss or name wrongly."""
    found = problems(schema)
    if found:
        lines = "\n".join(f"  {line}" for line in found)
        raise FieldTablesError(f"the schema's fields and the server's tables disagree:\n{lines}")

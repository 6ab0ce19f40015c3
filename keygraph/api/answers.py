"""What the resolvers of root fields and of relations share: a generated function's keyword
arguments from a field's, a page as a Relay connection, and fields answered by an attribute."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from graphql import GraphQLField, GraphQLObjectType, GraphQLResolveInfo, get_named_type

from keygraph.execution.plan import ATTRIBUTE
from keygraph.page import Page

from .bindings import Arg


def arguments(args: tuple[Arg, ...], given: dict[str, Any]) -> dict[str, Any]:
    """The function's keyword arguments from the field's (a path as a tuple)."""
    return {arg.param: converted(arg, given[arg.name]) for arg in args}


def converted(arg: Arg, value: Any) -> Any:
    return tuple(value) if arg.kind == "Path" else value


class PageInfo:
    """A connection's pageInfo: its cursors signed only when asked for; `first`, the
    index of its first edge's item."""

    __slots__ = ("_first", "_page", "has_next_page")
    has_previous_page = False

    def __init__(self, page: Page[Any], first: int | None = 0) -> None:
        self._page = page
        self._first = first if page.items else None
        self.has_next_page = page.has_next

    @property
    def start_cursor(self) -> str | None:
        return None if self._first is None else self._page.cursor_after(self._first)

    @property
    def end_cursor(self) -> str | None:
        page = self._page
        if page.has_next:
            return page.cursor
        return page.cursor_after(len(page.items) - 1) if page.items else None


class Edge:
    """An edge of a connection: its node, and its cursor signed only when asked for."""

    __slots__ = ("_index", "_page", "node")

    def __init__(self, page: Page[Any], index: int) -> None:
        self._page = page
        self._index = index
        self.node = page.items[index]

    @property
    def cursor(self) -> str | None:
        return self._page.cursor_after(self._index)


class Connection(NamedTuple):
    edges: list[Edge]
    page_info: PageInfo


CONNECTION_FIELDS: dict[str, str] = {
    "edges": "edges",
    "pageInfo": "page_info",
    "node": "node",
    "cursor": "cursor",
    "hasNextPage": "has_next_page",
    "hasPreviousPage": "has_previous_page",
    "startCursor": "start_cursor",
    "endCursor": "end_cursor",
}
"""The attribute answering each field of a connection, its edges and its PageInfo."""


def connection(page: Page[Any]) -> Connection:
    """A page as a Relay connection: each edge's cursor continues after its node."""
    return Connection([Edge(page, index) for index in range(len(page.items))], PageInfo(page))


def connection_through(page: Page[Any], nodes: list[Any]) -> Connection:
    """A page as a connection of other nodes, one for each item (None: no edge), each
    edge's cursor continuing after its item."""
    edges = []
    for index, node in enumerate(nodes):
        if node is not None:
            edge = Edge(page, index)
            edge.node = node
            edges.append(edge)
    first = edges[0]._index if edges else None
    return Connection(edges, PageInfo(page, first))


def answer_with(field: GraphQLField, attribute: str) -> None:
    """Answers the field with the source's attribute: by its resolver, and as compiled
    execution reads it (keygraph/execution)."""
    field.resolve = _attribute(attribute)
    field.extensions = {**(field.extensions or {}), ATTRIBUTE: attribute}


def _attribute(attribute: str) -> Callable[..., Any]:
    def resolve(source: Any, _info: GraphQLResolveInfo[Any]) -> Any:
        return getattr(source, attribute)

    return resolve


def bind_connection(field: GraphQLField) -> None:
    """Answers the fields of the connection the field gives, of its edges and PageInfo,
    from `connection`'s values."""
    connection_type = get_named_type(field.type)
    assert isinstance(connection_type, GraphQLObjectType)
    edge_type = get_named_type(connection_type.fields["edges"].type)
    page_info = get_named_type(connection_type.fields["pageInfo"].type)
    for gql in (connection_type, edge_type, page_info):
        assert isinstance(gql, GraphQLObjectType)
        for name, definition in gql.fields.items():
            answer_with(definition, CONNECTION_FIELDS[name])

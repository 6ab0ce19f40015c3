"""What the resolvers of root fields and of relations share: a generated function's keyword
arguments from a field's, and a page as a Relay connection."""

from __future__ import annotations

from typing import Any, NamedTuple

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

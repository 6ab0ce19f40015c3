"""Generic Relay connections built from a generated `Page`.

Every edge carries the cursor that continues after its node, and `pageInfo` the page's start
and end cursors, each signed only when a client asks for it. `pageInfo.endCursor` is the last
edge's cursor, on the last page too (so a client can later ask what has come since);
`hasNextPage` says whether another item follows. Pages go forward only (`first`, `after`), so
`hasPreviousPage` is false, as the Relay connection spec allows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import strawberry

from keygraph.page import Page

T = TypeVar("T")
S = TypeVar("S")


@strawberry.type(description="Where a page starts and ends, and whether another follows.")
class PageInfo:
    has_next_page: bool
    end_cursor_of: strawberry.Private[Callable[[], str | None]]
    start_cursor_of: strawberry.Private[Callable[[], str | None]]
    has_previous_page: bool = strawberry.field(
        default=False,
        description="Always false: pages go forward, with `first` and `after`.",
    )

    @strawberry.field(description="The first edge's cursor; null on an empty page.")
    def start_cursor(self) -> str | None:
        return self.start_cursor_of()

    @strawberry.field(description="Continues after this page; null on an empty last page.")
    def end_cursor(self) -> str | None:
        return self.end_cursor_of()


@strawberry.type(description="One node of a page.")
class Edge(Generic[T]):
    node: T
    cursor_after: strawberry.Private[Callable[[int], str | None]]
    """The page's `cursor_after` (not the page, which holds every item read)."""
    index: strawberry.Private[int]
    """The node's item's place in the page: its cursor is made from it when asked for."""

    @strawberry.field(description="Continues after this node.")
    def cursor(self) -> str:
        cursor = self.cursor_after(self.index)
        if cursor is None:
            raise ValueError("this page cannot make a cursor for its edges")
        return cursor


@strawberry.type(description="A page of nodes, Relay style.")
class Connection(Generic[T]):
    edges: list[Edge[T]]
    page_info: PageInfo


def connection_from_page(page: Page[S], convert: Callable[[S], T | None]) -> Connection[T]:
    """The connection of a page, each item turned into its node by `convert`; an item whose
    node is gone (None: a membership of a deleted group) gets no edge."""
    cursor_after = page.cursor_after
    edges = [
        Edge(node=node, cursor_after=cursor_after, index=index)
        for index, item in enumerate(page.items)
        if (node := convert(item)) is not None
    ]

    def end_cursor() -> str | None:
        if page.has_next:
            return page.cursor
        return cursor_after(edges[-1].index) if edges else None

    def start_cursor() -> str | None:
        return cursor_after(edges[0].index) if edges else None

    info = PageInfo(
        has_next_page=page.has_next, end_cursor_of=end_cursor, start_cursor_of=start_cursor
    )
    return Connection(edges=edges, page_info=info)

"""Generic Relay connections built from a generated `Page`.

Forward paging needs only the cursor after the last edge, and a generated page carries just
that one (it continues after the page's last item). So the last edge's cursor and
`pageInfo.endCursor` are the page cursor, and the other edges' cursors are null: a client that
pages forward with `after: pageInfo.endCursor` (or the last edge's cursor) gets the next page.
When no item follows, every cursor is null and `hasNextPage` is false.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import strawberry

from generated.runtime.page import Page

T = TypeVar("T")
S = TypeVar("S")


@strawberry.type(description="Where a page ends and whether another follows.")
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type(description="One node of a page.")
class Edge(Generic[T]):
    cursor: str | None = strawberry.field(
        description="Continues after this node; set on the page's last edge only."
    )
    node: T


@strawberry.type(description="A page of nodes, Relay style.")
class Connection(Generic[T]):
    edges: list[Edge[T]]
    page_info: PageInfo


def connection_from_items(items: list[T], cursor: str | None) -> Connection[T]:
    edges = [
        Edge(node=node, cursor=cursor if index == len(items) - 1 else None)
        for index, node in enumerate(items)
    ]
    return Connection(
        edges=edges, page_info=PageInfo(has_next_page=cursor is not None, end_cursor=cursor)
    )


def connection_from_page(page: Page[S], convert: Callable[[S], T]) -> Connection[T]:
    """The connection of a page, each item turned into its GraphQL node by `convert`."""
    return connection_from_items([convert(item) for item in page.items], page.cursor)

"""What the resolvers of root fields and of relations share: a generated function's keyword
arguments from a field's, and a page as a Relay connection."""

from __future__ import annotations

from typing import Any

from keygraph.page import Page

from .bindings import Arg


def arguments(args: tuple[Arg, ...], given: dict[str, Any]) -> dict[str, Any]:
    """The function's keyword arguments from the field's (a path as a tuple)."""
    return {arg.param: converted(arg, given[arg.name]) for arg in args}


def converted(arg: Arg, value: Any) -> Any:
    return tuple(value) if arg.kind == "Path" else value


def connection(page: Page[Any]) -> dict[str, Any]:
    """A page as a Relay connection: each edge's cursor continues after its node."""
    items, after = page.items, page.cursor_after
    edges = [{"node": item, "cursor": after(index)} for index, item in enumerate(items)]
    end = page.cursor if page.has_next else (after(len(items) - 1) if items else None)
    return {
        "edges": edges,
        "pageInfo": {
            "hasNextPage": page.has_next,
            "hasPreviousPage": False,
            "startCursor": edges[0]["cursor"] if edges else None,
            "endCursor": end,
        },
    }

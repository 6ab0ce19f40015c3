"""The Relay `Node` interface and the registry `node(id)` dispatches through.

Each domain module registers a loader for every type it owns at import time; the global id's
type name picks the loader, so `node(id)` needs no knowledge of the domains.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import strawberry

from ..context import Context
from ..errors import NotFound
from ..ids import local_id


@strawberry.interface(description="An object with a globally unique, opaque id.")
class Node:
    id: strawberry.ID


NodeResolver = Callable[[Context, str], Awaitable[Node | None]]
"""Loads a node of one type from the request context and its local id; None when absent."""

_RESOLVERS: dict[str, NodeResolver] = {}


def register_node(type_name: str, resolve: NodeResolver) -> None:
    """Make `node(id)` answer for global ids of `type_name` by calling `resolve`."""
    existing = _RESOLVERS.get(type_name)
    if existing is not None and existing is not resolve:
        raise ValueError(f"node type {type_name!r} is already registered")
    _RESOLVERS[type_name] = resolve


def node_resolver(type_name: str) -> NodeResolver | None:
    return _RESOLVERS.get(type_name)


def lookup_id(global_id: str, type_name: str) -> str | None:
    """The local id of a global id naming `type_name`; None for another type (a lookup of
    it finds nothing), BadUserInput when it is no global id at all."""
    try:
        return local_id(global_id, type_name)
    except NotFound:
        return None

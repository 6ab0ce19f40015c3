"""The Relay `Node` interface and the registry of node types.

Each type's module registers, at import time, how to load a node of its type by local id
(`node(id)` dispatches on the global id's type name) and how to build one from its model.
A type that returns nodes of another type builds them through the registry, so the modules
of types that refer to each other (a user's orders, an order's user) need not import each
other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import strawberry

from keygraph.caller import Caller
from server.errors import NotFound
from server.graphql.context import Context
from server.graphql.ids import local_id


@strawberry.interface(description="An object with a globally unique, opaque id.")
class Node:
    id: strawberry.ID


NodeResolver = Callable[[Context, str], Awaitable[Node | None]]
"""Loads a node of one type from the request context and its local id; None when absent."""

NodeBuilder = Callable[[Any, Caller], Node]
"""Builds a node of one type from its model, for a caller."""

_RESOLVERS: dict[str, NodeResolver] = {}
_BUILDERS: dict[str, NodeBuilder] = {}


def register_node(type_name: str, resolve: NodeResolver, build: NodeBuilder | None = None) -> None:
    """Make `node(id)` answer for global ids of `type_name` by calling `resolve`, and
    `build_node(type_name, model)` by calling `build`."""
    existing = _RESOLVERS.get(type_name)
    if existing is not None and existing is not resolve:
        raise ValueError(f"node type {type_name!r} is already registered")
    _RESOLVERS[type_name] = resolve
    if build is not None:
        _BUILDERS[type_name] = build


def build_node(type_name: str, model: object, caller: Caller) -> Node:
    """The node of `type_name` built from its model for `caller` by the builder its module
    registered."""
    return _BUILDERS[type_name](model, caller)


def node_resolver(type_name: str) -> NodeResolver | None:
    return _RESOLVERS.get(type_name)


def lookup_id(global_id: str, type_name: str) -> str | None:
    """The local id of a global id naming `type_name`; None for another type (a lookup of
    it finds nothing), BadUserInput when it is no global id at all."""
    try:
        return local_id(global_id, type_name)
    except NotFound:
        return None

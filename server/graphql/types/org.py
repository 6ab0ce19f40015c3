"""Org trees: nodes addressed by their path of ids from the root (T1-T3).

A node's global id carries its whole path (the ids joined by "."; ids never hold a "."), so
its key is known without a read: the node itself, its parent and its ancestors are all
BatchGetItem keys, and its subtree is one begins_with on the path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import strawberry
from strawberry.dataloader import DataLoader

from generated import authz
from generated.models.org_node import OrgNode as OrgNodeRecord
from generated.queries.org_node import get_org_nodes, org_children, org_subtree
from keygraph.store import Session
from server.authz import require
from server.domain.org import MAX_CHILDREN, MAX_LEVELS, Path
from server.errors import BadUserInput
from server.graphql.context import Context, Info
from server.graphql.ids import local_id, to_global_id
from server.graphql.types.connection import Connection, connection_from_page
from server.graphql.types.node import Node, register_node

TYPE_NAME = "OrgNode"
PATH_SEPARATOR = "."
CHILDREN_PAGE_SIZE = MAX_CHILDREN


def node_global_id(path: Sequence[str]) -> strawberry.ID:
    return to_global_id(TYPE_NAME, PATH_SEPARATOR.join(path))


def parse_path(local: str) -> Path | None:
    """The path inside an OrgNode local id; None when it cannot name a node (an empty part,
    or more levels than a tree may have)."""
    parts = tuple(local.split(PATH_SEPARATOR))
    return None if len(parts) > MAX_LEVELS or any(not part for part in parts) else parts


def node_path(global_id: str) -> Path | None:
    """The path inside an OrgNode global id (NotFound for another type's id)."""
    return parse_path(local_id(global_id, TYPE_NAME))


@strawberry.type(name="OrgNode", description="A node of an org tree; roots have depth 0.")
class OrgNode(Node):
    name: str
    depth: int
    version: int = strawberry.field(
        description="Increases with every change to the node or to its children; pass it "
        "back as expectedVersion to delete or move the node."
    )
    record: strawberry.Private[OrgNodeRecord]

    @classmethod
    def from_record(cls, record: OrgNodeRecord) -> OrgNode:
        return cls(
            id=node_global_id(record.path),
            name=record.name,
            depth=len(record.path) - 1,
            version=record.version,
            record=record,
        )

    @strawberry.field(description="The node above this one; null for a root.")
    async def parent(self, info: Info) -> OrgNode | None:
        path = self.record.path
        return None if len(path) == 1 else await load_org_node(info.context, path[:-1])

    @strawberry.field(
        description="The nodes directly below this one, by name: the first `first`, all when "
        "left out (a node has at most 100)."
    )
    async def children(self, info: Info, first: int | None = None) -> list[OrgNode]:
        return await load_children(info.context, self.record.node_id, first)

    @strawberry.field(
        description="Every node below this one, each before its own descendants, paged."
    )
    async def descendants(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[OrgNode]:
        ctx = info.context
        require(authz.may_run_org_subtree(ctx.caller), "read org trees")
        page = await org_subtree(
            ctx.session, ctx.tenant, self.record.path, first=first, after=after
        )
        _node_loader(ctx).prime_many({record.path: record for record in page.items})
        return connection_from_page(page, OrgNode.from_record)

    @strawberry.field(description="The nodes from the root down to this node's parent.")
    async def ancestors(self, info: Info) -> list[OrgNode]:
        path = self.record.path
        require(authz.may_run_get_org_nodes(info.context.caller), "read org trees")
        records = await _node_loader(info.context).load_many(
            [path[:end] for end in range(1, len(path))]
        )
        return [OrgNode.from_record(r) for r in records if isinstance(r, OrgNodeRecord)]


def _node_loader(ctx: Context) -> DataLoader[Path, OrgNodeRecord | None]:
    async def load(paths: Sequence[Path]) -> list[OrgNodeRecord | None]:
        return await get_org_nodes(ctx.session, ctx.tenant, paths)

    return ctx.loader("org_nodes", load)


async def load_org_node(ctx: Context, path: Path) -> OrgNode | None:
    """A node by its path, through the request's batched loader (BatchGetItem), read with
    its ancestors in the same batch: a node below a removed one (left by a large delete or
    move still at work) is not found."""
    require(authz.may_run_get_org_nodes(ctx.caller), "read org trees")
    records = await _node_loader(ctx).load_many([path[:end] for end in range(1, len(path) + 1)])
    record = records[-1]
    if record is None or any(ancestor is None for ancestor in records):
        return None
    return OrgNode.from_record(record)


async def _children(session: Session, tenant: str, parent_ref: str) -> list[OrgNodeRecord]:
    """The first MAX_CHILDREN children in the index's order (a node has no more unless two
    creates raced), sorted by (name, id)."""
    found: list[OrgNodeRecord] = []
    after: str | None = None
    while len(found) < MAX_CHILDREN:
        size = min(CHILDREN_PAGE_SIZE, MAX_CHILDREN - len(found))
        page = await org_children(session, tenant, parent_ref, first=size, after=after)
        found.extend(page.items)
        if not page.has_next:
            break
        after = page.cursor
    return sorted(found, key=lambda record: (record.name, record.node_id))


async def load_children(ctx: Context, parent_ref: str, first: int | None = None) -> list[OrgNode]:
    """The first `first` children of a node id (ROOT for the roots), sorted by (name, id);
    all of them (at most MAX_CHILDREN) when `first` is None. One GSI1 Query per parent; the
    parents asked for together go out concurrently, and a parent asked for twice in a
    request is read once."""
    require(authz.may_run_org_children(ctx.caller), "read org trees")
    if first is not None and not 0 <= first <= MAX_CHILDREN:
        raise BadUserInput(f"first must be between 0 and {MAX_CHILDREN}, got {first}")

    async def load(parent_refs: Sequence[str]) -> list[list[OrgNodeRecord]]:
        return list(
            await asyncio.gather(*(_children(ctx.session, ctx.tenant, ref) for ref in parent_refs))
        )

    records = await ctx.loader("org_children", load).load(parent_ref)
    # Children read here are nodes the request may ask for again (as a child's parent).
    _node_loader(ctx).prime_many({record.path: record for record in records})
    return [OrgNode.from_record(record) for record in records[:first]]


async def resolve_node(ctx: Context, local: str) -> OrgNode | None:
    path = parse_path(local)
    return None if path is None else await load_org_node(ctx, path)


register_node(TYPE_NAME, resolve_node)

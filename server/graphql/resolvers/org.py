"""Root fields for org trees: a node by id, the roots, and creating a node."""

from __future__ import annotations

import strawberry

from server.domain import org
from server.errors import NotFound
from server.graphql.context import Info
from server.graphql.types.node import lookup_id
from server.graphql.types.org import (
    TYPE_NAME,
    OrgNode,
    load_children,
    load_org_node,
    node_path,
    parse_path,
)


@strawberry.input(description="A new org node; without parentId it is a root.")
class CreateOrgNodeInput:
    name: str
    parent_id: strawberry.ID | None = None


@strawberry.type
class OrgQuery:
    @strawberry.field(description="An org node by id.")
    async def org_node(self, info: Info, id: strawberry.ID) -> OrgNode | None:
        local = lookup_id(id, TYPE_NAME)
        path = None if local is None else parse_path(local)
        return None if path is None else await load_org_node(info.context, path)

    @strawberry.field(
        description="The roots of the tenant's org trees, by name: the first `first`, all when "
        "left out (a tenant has at most 100)."
    )
    async def org_roots(self, info: Info, first: int | None = None) -> list[OrgNode]:
        return await load_children(info.context, org.ROOT_REF, first)


@strawberry.type
class OrgMutation:
    @strawberry.mutation(
        description="Create an org node under parentId, or a root; NOT_FOUND for a missing parent."
    )
    async def create_org_node(self, info: Info, input: CreateOrgNodeInput) -> OrgNode:
        ctx = info.context
        parent_path: org.Path = ()
        missing = NotFound(f"no OrgNode with id {input.parent_id!r}")
        if input.parent_id is not None:
            found = node_path(input.parent_id)
            if found is None:
                raise missing
            parent_path = found
        try:
            record = await org.create_org_node(ctx.session, ctx.tenant, input.name, parent_path)
        except NotFound as exc:
            raise missing from exc
        return OrgNode.from_record(record)

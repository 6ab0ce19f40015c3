"""Root fields for org trees: a node by id, the roots; creating, deleting, moving a node."""

from __future__ import annotations

import strawberry

from generated import authz
from server.authz import require
from server.domain import org, org_changes
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
from server.graphql.types.payloads import DeletePayload


@strawberry.input(description="A new org node; without parentId it is a root.")
class CreateOrgNodeInput:
    name: str
    parent_id: strawberry.ID | None = None


@strawberry.input(description="An org node to delete, checked against the version last read.")
class DeleteOrgNodeInput:
    id: strawberry.ID
    expected_version: int
    cascade: bool = strawberry.field(
        default=False, description="Delete the node's whole subtree; without it only a leaf."
    )


@strawberry.input(description="Where an org node and its subtree move to.")
class MoveOrgNodeInput:
    id: strawberry.ID
    expected_version: int
    new_parent_id: strawberry.ID | None = strawberry.field(
        default=None, description="The new parent; the node becomes a root when left out."
    )


@strawberry.type(description="An org node after a move.")
class MoveOrgNodePayload:
    node: OrgNode = strawberry.field(
        description="The node at its new place; its id, and its descendants' ids, changed."
    )
    complete: bool = strawberry.field(
        description="False while a large move goes on; its subtree refuses changes until done."
    )


def _path_of(global_id: str, what: str) -> org.Path:
    path = node_path(global_id)
    if path is None:
        raise NotFound(f"no {what} with id {global_id!r}")
    return path


@strawberry.type
class OrgQuery:
    @strawberry.field(description="An org node by id.")
    async def org_node(self, info: Info, id: strawberry.ID) -> OrgNode | None:
        local = lookup_id(id, TYPE_NAME)
        path = None if local is None else parse_path(local)
        return None if path is None else await load_org_node(info.context, path)

    @strawberry.field(
        description="The roots of the tenant's org trees, by name: the first `first`, all when "
        "left out (a tenant has at most 100). Null with FORBIDDEN for a caller who may not "
        "read org trees."
    )
    async def org_roots(self, info: Info, first: int | None = None) -> list[OrgNode] | None:
        return await load_children(info.context, org.ROOT_REF, first)


@strawberry.type
class OrgMutation:
    @strawberry.mutation(
        description="Create an org node under parentId, or a root; NOT_FOUND for a missing parent."
    )
    async def create_org_node(self, info: Info, input: CreateOrgNodeInput) -> OrgNode:
        ctx = info.context
        require(authz.may_create_org_node(ctx.caller), "create org nodes")
        parent_path: org.Path = ()
        missing = NotFound(f"no OrgNode with id {input.parent_id!r}")
        if input.parent_id is not None:
            found = node_path(input.parent_id)
            if found is None:
                raise missing
            parent_path = found
        try:
            record = await org.create_org_node(
                ctx.server_session, ctx.tenant, input.name, parent_path
            )
        except NotFound as exc:
            raise missing from exc
        return OrgNode.from_record(record)

    @strawberry.mutation(
        description="Delete an org node: a leaf, or its whole subtree with cascade: true."
    )
    async def delete_org_node(self, info: Info, input: DeleteOrgNodeInput) -> DeletePayload:
        ctx = info.context
        path = _path_of(input.id, TYPE_NAME)
        require(authz.may_delete_org_node(ctx.caller), "delete org nodes")
        complete = await org_changes.delete_org_node(
            ctx.server_session, ctx.tenant, path, input.expected_version, input.cascade
        )
        return DeletePayload(deleted_id=input.id, complete=complete)

    @strawberry.mutation(
        description="Move an org node and its subtree under another parent, or make it a root."
    )
    async def move_org_node(self, info: Info, input: MoveOrgNodeInput) -> MoveOrgNodePayload:
        ctx = info.context
        path = _path_of(input.id, TYPE_NAME)
        require(authz.may_update_org_node(ctx.caller), "move org nodes")
        parent = () if input.new_parent_id is None else _path_of(input.new_parent_id, TYPE_NAME)
        record, complete = await org_changes.move_org_node(
            ctx.server_session, ctx.tenant, path, input.expected_version, parent
        )
        return MoveOrgNodePayload(node=OrgNode.from_record(record), complete=complete)

"""Root fields for groups: by id; create, add and remove members."""

from __future__ import annotations

import strawberry

from generated import authz
from server.authz import require
from server.domain import groups
from server.errors import NotFound
from server.graphql.context import Info
from server.graphql.types.group import Group, load_group
from server.graphql.types.node import lookup_id
from server.graphql.types.payloads import DeleteInput, DeletePayload, delete, local_id_of


@strawberry.input(description="A new group.")
class CreateGroupInput:
    name: str


def _ids(group_id: strawberry.ID, user_id: strawberry.ID) -> tuple[str, str]:
    return local_id_of(group_id, "Group"), local_id_of(user_id, "User")


async def _reload(info: Info, group_id: str) -> Group:
    group = await load_group(info.context, group_id)
    if group is None:
        raise NotFound("no such group")
    return group


@strawberry.type
class GroupQuery:
    @strawberry.field(description="A group by id; null when there is none.")
    async def group(self, info: Info, id: strawberry.ID) -> Group | None:
        group_id = lookup_id(id, "Group")
        return None if group_id is None else await load_group(info.context, group_id)


@strawberry.type
class GroupMutation:
    @strawberry.mutation(description="Create a group.")
    async def create_group(self, info: Info, input: CreateGroupInput) -> Group:
        ctx = info.context
        require(authz.may_create_group(ctx.caller), "create groups")
        return Group.from_model(
            await groups.create_group(ctx.server_session, ctx.tenant, input.name)
        )

    @strawberry.mutation(description="Add a user to a group; adding a member again is a no-op.")
    async def add_group_member(
        self, info: Info, group_id: strawberry.ID, user_id: strawberry.ID
    ) -> Group:
        ctx = info.context
        group, user = _ids(group_id, user_id)
        require(authz.may_create_membership(ctx.caller, user_id=user), "add this user to groups")
        await groups.add_member(ctx.server_session, ctx.tenant, group, user)
        return await _reload(info, group)

    @strawberry.mutation(
        description="Remove a user from a group; removing a non-member is a no-op."
    )
    async def remove_group_member(
        self, info: Info, group_id: strawberry.ID, user_id: strawberry.ID
    ) -> Group:
        ctx = info.context
        group, user = _ids(group_id, user_id)
        allowed = authz.may_delete_membership(ctx.caller, user_id=user)
        require(allowed, "remove this user from groups")
        await groups.remove_member(ctx.server_session, ctx.tenant, group, user)
        return await _reload(info, group)

    @strawberry.mutation(
        description="Delete a group with every membership; a stale expectedVersion is a CONFLICT."
    )
    async def delete_group(self, info: Info, input: DeleteInput) -> DeletePayload:
        return await delete(
            info, input, "Group", authz.may_delete_group, "delete groups", groups.delete_group
        )

"""The Group type and its members (by user id)."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.types.lazy_type import LazyType

from generated import authz
from generated.models.group import Group as GroupModel
from generated.queries.group import get_group
from server.authz import require
from server.graphql import loaders
from server.graphql.context import Context, Info
from server.graphql.ids import to_global_id
from server.graphql.types.connection import Connection, connection_from_page
from server.graphql.types.node import Node, build_node, register_node


@strawberry.type(description="A named group of users.")
class Group(Node):
    name: str
    created_at: datetime
    version: int = strawberry.field(
        description="Increases with every change; pass it back as expectedVersion to change it."
    )
    group_id: strawberry.Private[str]

    @classmethod
    def from_model(cls, model: GroupModel) -> Group:
        return cls(
            id=to_global_id("Group", model.group_id),
            name=model.name,
            created_at=model.created_at,
            version=model.version,
            group_id=model.group_id,
        )

    # User by name and module, resolved when the schema is built: user.py imports this one
    # (mypy reads the subscript as a type, and a LazyType is none).
    @strawberry.field(
        description="The group's members, by user id.",
        graphql_type=Connection[LazyType("User", "server.graphql.types.user")],  # type: ignore[misc]
    )
    async def members(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[Node]:
        require(authz.may_run_group_members(info.context.caller), "read group members")
        page = await loaders.memberships_of_group(info.context).load((self.group_id, first, after))
        found = await loaders.users(info.context).load_many([m.user_id for m in page.items])
        caller = info.context.caller
        users = {u.user_id: build_node("User", u, caller) for u in found if u}
        return connection_from_page(page, lambda membership: users.get(membership.user_id))


async def load_group(ctx: Context, group_id: str) -> Group | None:
    require(authz.may_run_get_group(ctx.caller), "read groups")
    model = await get_group(ctx.session, ctx.tenant, group_id, consistent=True)
    return None if model is None else Group.from_model(model)


register_node("Group", load_group)

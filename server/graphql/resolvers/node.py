"""`node(id)` for every registered type, and `viewer`."""

from __future__ import annotations

import strawberry

from server.graphql.context import Info
from server.graphql.ids import from_global_id
from server.graphql.types.node import Node, node_resolver
from server.graphql.types.viewer import Viewer


@strawberry.type
class NodeQuery:
    @strawberry.field(description="Any object by its global id; null when there is none.")
    async def node(self, info: Info, id: strawberry.ID) -> Node | None:
        type_name, local = from_global_id(id)
        resolve = node_resolver(type_name)
        if resolve is None:
            return None
        return await resolve(info.context, local)

    @strawberry.field(description="The caller's tenant, subject and roles, from the token.")
    def viewer(self, info: Info) -> Viewer:
        caller = info.context.caller
        return Viewer(
            tenant=info.context.tenant, subject=caller.subject, roles=sorted(caller.roles)
        )

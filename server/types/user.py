"""The User type: profile fields, the user's orders (newest first) and groups."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry

from generated.models.user import User as UserModel
from generated.queries.user import get_user

from .. import loaders
from ..context import Context, Info
from ..errors import BadUserInput
from ..ids import to_global_id
from . import group as group_types
from . import order as order_types
from .connection import Connection, connection_from_page
from .node import Node, register_node

if TYPE_CHECKING:
    from .group import Group
    from .order import Order


@strawberry.type(description="A person in a tenant.")
class User(Node):
    email: str
    name: str
    created_at: datetime
    version: int = strawberry.field(
        description="Increases with every update; pass it back as expectedVersion to update."
    )
    user_id: strawberry.Private[str]

    @classmethod
    def from_model(cls, model: UserModel) -> User:
        return cls(
            id=to_global_id("User", model.user_id),
            email=model.email,
            name=model.name,
            created_at=model.created_at,
            version=model.version,
            user_id=model.user_id,
        )

    @strawberry.field(
        description="The user's orders, newest first; `from` is inclusive and `to` exclusive."
    )
    async def orders(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        from_: Annotated[datetime | None, strawberry.argument(name="from")] = None,
        to: datetime | None = None,
    ) -> Connection[Annotated[Order, strawberry.lazy("server.types.order")]]:
        if from_ is not None and to is not None and from_ > to:
            raise BadUserInput("`from` must not be after `to`")
        key = (self.user_id, first, after, from_, to)
        page = await loaders.orders_of_user(info.context).load(key)
        return connection_from_page(page, order_types.Order.from_model)

    @strawberry.field(description="The groups the user belongs to, by group id.")
    async def groups(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[Annotated[Group, strawberry.lazy("server.types.group")]]:
        page = await loaders.memberships_of_user(info.context).load((self.user_id, first, after))
        found = await loaders.groups(info.context).load_many([m.group_id for m in page.items])
        groups = {group.group_id: group_types.Group.from_model(group) for group in found if group}
        return connection_from_page(page, lambda membership: groups.get(membership.group_id))


async def load_user(ctx: Context, user_id: str) -> User | None:
    model = await get_user(ctx.session, ctx.tenant, user_id, consistent=True)
    return None if model is None else User.from_model(model)


register_node("User", load_user)

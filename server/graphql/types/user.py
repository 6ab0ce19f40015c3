"""The User type: profile fields, addresses, the user's orders (newest first) and groups.

What only some callers may read (the email, addresses and orders; generated/authz.py) is
decided from the caller the user was built for and the user's id, before any read: a
refused field is null with FORBIDDEN at its path, and loads nothing."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.dataloader import DataLoader

from generated import authz
from generated.models.address import Address as AddressModel
from generated.models.group import Group as GroupModel
from generated.models.membership import Membership
from generated.models.user import User as UserModel
from generated.models.user_order import UserOrder
from generated.queries.user import get_user
from keygraph.caller import Caller
from keygraph.page import Page
from server.authz import require
from server.authz.fields import may_read_orders
from server.domain.groups import groups_page
from server.errors import BadUserInput, Forbidden
from server.graphql import loaders
from server.graphql.answers import UNANSWERED, Unanswered, answered_by
from server.graphql.context import Context, Info
from server.graphql.ids import to_global_id
from server.graphql.types import group as group_types
from server.graphql.types import order as order_types
from server.graphql.types.address import Address
from server.graphql.types.connection import Connection, connection_from_page
from server.graphql.types.node import Node, register_node

if TYPE_CHECKING:
    from server.graphql.types.group import Group
    from server.graphql.types.order import Order

OrdersLoader = DataLoader[loaders.OrdersKey, Page[UserOrder]]


@strawberry.type(description="A person in a tenant.")
class User(Node):
    name: str
    created_at: datetime
    version: int = strawberry.field(
        description="Increases with every update; pass it back as expectedVersion to update."
    )
    user_id: strawberry.Private[str]
    caller: strawberry.Private[Caller]
    """Who the user was read for: what it may read of the user."""
    email_answer: strawberry.Private[str | Unanswered]
    """The email when the caller may read it, by the rule (server/graphql/answers.py)."""
    default_address_id: strawberry.Private[str | None]
    group_ids: strawberry.Private[list[str] | None]
    """The user's group ids as its item keeps them; None on a user stored before it did."""
    read_addresses: strawberry.Private[list[AddressModel] | None]
    """The user's addresses when they were read together with it."""

    @classmethod
    def from_model(
        cls, model: UserModel, caller: Caller, addresses: list[AddressModel] | None = None
    ) -> User:
        return cls(
            id=to_global_id("User", model.user_id),
            name=model.name,
            created_at=model.created_at,
            version=model.version,
            user_id=model.user_id,
            caller=caller,
            email_answer=model.email
            if authz.may_read_user_email(caller, user_id=model.user_id)
            else UNANSWERED,
            default_address_id=model.default_address_id,
            group_ids=model.group_ids,
            read_addresses=addresses,
        )

    @strawberry.field(
        description="The user's email; null with FORBIDDEN for a caller who may not read it "
        "(a member reads only its own).",
        metadata=answered_by("email_answer"),
    )
    def email(self) -> str | None:
        answer = self.email_answer  # the rule, decided when the user was built
        if isinstance(answer, Unanswered):
            raise Forbidden("not allowed to read this user's email")
        return answer

    @strawberry.field(
        description="The user's addresses, oldest first (at most 20). Read with the user in "
        "one Query when the user is asked for by id. Null with FORBIDDEN for a caller who may "
        "not read them."
    )
    async def addresses(self, info: Info) -> list[Address] | None:
        self._may_read_addresses()
        return [Address.from_model(a, self.default_address_id) for a in await self._addresses(info)]

    @strawberry.field(description="The address used when none is named; null when none is set.")
    async def default_address(self, info: Info) -> Address | None:
        require(
            authz.may_read_user_default_address_id(self.caller, user_id=self.user_id),
            "read this user's addresses",
        )
        self._may_read_addresses()
        if self.default_address_id is None:
            return None
        for model in await self._addresses(info):
            if model.address_id == self.default_address_id:
                return Address.from_model(model, self.default_address_id)
        return None

    def _may_read_addresses(self) -> None:
        allowed = authz.may_run_user_with_addresses(self.caller, user_id=self.user_id)
        require(allowed, "read this user's addresses")

    async def _addresses(self, info: Info) -> list[AddressModel]:
        if self.read_addresses is not None:
            return self.read_addresses
        return await loaders.addresses_of_user(info.context).load(self.user_id)

    # orders and groups answer at once when a list of users loaded them ahead (prefetch.py),
    # and through the request's loaders otherwise.

    @strawberry.field(
        description="The user's orders, newest first; `from` is inclusive and `to` exclusive. "
        "Null with FORBIDDEN for a caller who may not read them.",
        graphql_type=Connection[Annotated["Order", strawberry.lazy("server.graphql.types.order")]]
        | None,
    )
    def orders(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        from_: Annotated[datetime | None, strawberry.argument(name="from")] = None,
        to: datetime | None = None,
    ) -> Connection[Order] | Awaitable[Connection[Order]] | None:
        if from_ is not None and to is not None and from_ > to:
            raise BadUserInput("`from` must not be after `to`")
        require(may_read_orders(self.caller, self.user_id, from_, to), "read this user's orders")
        loader = loaders.orders_of_user(info.context)
        key = (self.user_id, first, after, from_, to)
        ready = loaders.settled(loader, key)
        if ready is None:
            return _orders(loader, key)
        return connection_from_page(ready.result(), order_types.Order.from_model)

    @strawberry.field(
        description="The groups the user belongs to, by group id.",
        graphql_type=Connection[Annotated["Group", strawberry.lazy("server.graphql.types.group")]],
    )
    def groups(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[Group] | Awaitable[Connection[Group]]:
        ctx = info.context
        require(authz.may_run_user_groups(ctx.caller), "read groups")
        if self.group_ids is not None and after is None:
            page = groups_page(ctx.session, ctx.tenant, self.user_id, self.group_ids, first)
        else:
            ready = loaders.settled(loaders.memberships_of_user(ctx), (self.user_id, first, after))
            if ready is None:
                return _groups(ctx, (self.user_id, first, after))
            page = _group_ids(ready.result())
        group_loader = loaders.groups(ctx)
        found = [loaders.settled(group_loader, group_id) for group_id in page.items]
        if all(future is not None for future in found):
            return _groups_of(ctx, page, [future.result() for future in found if future])
        return _groups_of_page(ctx, page)


async def _orders(loader: OrdersLoader, key: loaders.OrdersKey) -> Connection[Order]:
    return connection_from_page(await loader.load(key), order_types.Order.from_model)


def _group_ids(page: Page[Membership]) -> Page[str]:
    ids = [membership.group_id for membership in page.items]
    return Page(ids, page.has_next, page.cursor_after, page.next_cursor)


async def _groups(ctx: Context, key: loaders.PageKey) -> Connection[Group]:
    page = await loaders.memberships_of_user(ctx).load(key)
    return await _groups_of_page(ctx, _group_ids(page))


async def _groups_of_page(ctx: Context, page: Page[str]) -> Connection[Group]:
    return _groups_of(ctx, page, await loaders.groups(ctx).load_many(page.items))


def _groups_of(ctx: Context, page: Page[str], found: list[GroupModel | None]) -> Connection[Group]:
    """The connection of a page of group ids; a group gone meanwhile gets no edge."""
    convert = group_types.Group.from_model
    groups = {group.group_id: ctx.converted(group, convert) for group in found if group}
    return connection_from_page(page, groups.get)


async def load_user(ctx: Context, user_id: str) -> User | None:
    require(authz.may_run_get_user(ctx.caller), "read users")
    model = await get_user(ctx.session, ctx.tenant, user_id, consistent=True)
    return None if model is None else User.from_model(model, ctx.caller)


register_node("User", load_user, User.from_model)

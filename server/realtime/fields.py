"""The Subscription root type: each field checks the caller's rights when subscribing
(FORBIDDEN before anything streams), then yields the changes on its topic the caller may
see, each with a cursor to resume after. Each event's object resolves through the same
types, resolvers and loaders as a query's, so a field the caller may not read is null with
FORBIDDEN; the loaders start empty for every event."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from enum import Enum
from typing import TypeVar

import strawberry

from generated import authz
from keygraph.caller import Caller
from keygraph.realtime.changes import Change, Topic
from keygraph.realtime.follow import FeedLost, follow
from server.authz import require
from server.errors import ApiError, NotFound
from server.graphql import loaders
from server.graphql.context import Info
from server.graphql.ids import to_global_id
from server.graphql.types.node import lookup_id
from server.graphql.types.order import Order
from server.graphql.types.org import OrgNode, node_path
from server.graphql.types.user import User
from server.realtime.changes import ORG_PATH_SEPARATOR, tenant_partitions
from server.realtime.context import SubscriptionContext

E = TypeVar("E")

TRIMMED_CODE = "EVENTS_TRIMMED"


class SubscriberTooSlow(ApiError):
    code = "SUBSCRIBER_TOO_SLOW"


@strawberry.enum(description="How an object changed.")
class ChangeKind(Enum):
    CREATED = "CREATED"
    UPDATED = "UPDATED"
    DELETED = "DELETED"


@strawberry.type(description="An order created, updated or deleted (as it was, when deleted).")
class OrderChange:
    change: ChangeKind
    order: Order
    cursor: str = strawberry.field(description="Pass it as `after` to resume after this event.")


@strawberry.type(description="A user created, updated or deleted (as it was, when deleted).")
class UserChange:
    change: ChangeKind
    user: User
    cursor: str = strawberry.field(description="Pass it as `after` to resume after this event.")


@strawberry.type(description="A user added to (CREATED) or removed from (DELETED) a group.")
class GroupMemberChange:
    change: ChangeKind
    group_id: strawberry.ID
    user_id: strawberry.ID
    cursor: str = strawberry.field(description="Pass it as `after` to resume after this event.")

    @strawberry.field(description="The member; null when the user no longer exists.")
    async def user(self, info: Info) -> User | None:
        ctx = info.context
        require(authz.may_run_get_users(ctx.caller), "read users")
        local = lookup_id(self.user_id, "User")
        model = None if local is None else await loaders.users(ctx).load(local)
        return None if model is None else User.from_model(model, ctx.caller)


@strawberry.type(
    description="A node of the subscribed subtree created, updated (renamed, its children "
    "changed) or deleted; a move is its deletion at the old path and creation at the new one."
)
class OrgNodeChange:
    change: ChangeKind
    node: OrgNode
    cursor: str = strawberry.field(description="Pass it as `after` to resume after this event.")


def _context(info: Info) -> SubscriptionContext:
    ctx = info.context
    if not isinstance(ctx, SubscriptionContext):
        raise NotFound("subscriptions are served over WebSocket at /graphql")
    return ctx


def _events(
    info: Info,
    topic: Topic,
    after: str | None,
    visible: Callable[[Caller, Change], bool],
    build: Callable[[SubscriptionContext, Change, str], E],
) -> AsyncGenerator[E, None]:
    """The events of `topic` the caller may see: those the stream holds after `after`,
    then live ones, none twice at the seam and none at or before `after`."""
    ctx = _context(info)
    hub, cursors = ctx.hub, ctx.cursors
    assert hub is not None
    assert cursors is not None
    frontier = None if after is None else cursors.decode(ctx.tenant, after)

    async def trimmed() -> None:
        await ctx.notify(
            {
                "message": "events after the cursor are no longer kept; replaying from the "
                "oldest kept",
                "extensions": {"code": TRIMMED_CODE},
            }
        )

    def pay(points: int) -> None:
        assert ctx.meter is not None  # a subscription whose variables coerce is metered
        ctx.meter.charge(points)

    def sees(change: Change) -> bool:
        return visible(ctx.caller, change)

    def event(change: Change, cursor: str) -> E:
        ctx.forget()
        ctx.change = change
        return build(ctx, change, cursor)

    async def generate() -> AsyncGenerator[E, None]:
        changes = follow(
            hub,
            cursors,
            ctx.tenant,
            topic,
            frontier,
            sees,
            within=tenant_partitions(ctx.tenant),
            pay=pay,
            trimmed=trimmed,
            feeds=None if ctx.seat is None else ctx.seat(sees, event),
        )
        try:
            async for change, cursor in changes:
                yield event(change, cursor)
        except FeedLost as exc:
            raise SubscriberTooSlow(str(exc)) from exc
        finally:
            await changes.aclose()

    return generate()


def _kind(change: Change) -> ChangeKind:
    return ChangeKind(change.kind)


@strawberry.type
class Subscription:
    @strawberry.subscription(
        description="A user's orders as they are created, updated or deleted; FORBIDDEN for "
        "a caller who may not list them."
    )
    async def order_changed(
        self, info: Info, user_id: strawberry.ID, after: str | None = None
    ) -> AsyncGenerator[OrderChange, None]:
        local = lookup_id(user_id, "User")
        if local is None:
            raise NotFound("no such user")
        require(authz.may_run_user_orders(info.context.caller, user_id=local), "list its orders")
        return _events(
            info,
            ("order", local),
            after,
            lambda caller, c: authz.may_read_order(caller, user_id=c.model.user_id),
            lambda _ctx, c, cursor: OrderChange(
                change=_kind(c), order=Order.from_model(c.model), cursor=cursor
            ),
        )

    @strawberry.subscription(description="A user as it is created, updated or deleted.")
    async def user_changed(
        self, info: Info, id: strawberry.ID, after: str | None = None
    ) -> AsyncGenerator[UserChange, None]:
        local = lookup_id(id, "User")
        if local is None:
            raise NotFound("no such user")
        require(authz.may_run_get_user(info.context.caller), "read users")
        return _events(
            info,
            ("user", local),
            after,
            lambda caller, _c: authz.may_read_user(caller),
            lambda ctx, c, cursor: UserChange(
                change=_kind(c), user=User.from_model(c.model, ctx.caller), cursor=cursor
            ),
        )

    @strawberry.subscription(description="Users added to and removed from a group.")
    async def group_members_changed(
        self, info: Info, group_id: strawberry.ID, after: str | None = None
    ) -> AsyncGenerator[GroupMemberChange, None]:
        local = lookup_id(group_id, "Group")
        if local is None:
            raise NotFound("no such group")
        require(authz.may_run_group_members(info.context.caller), "read group members")
        return _events(
            info,
            ("group", local),
            after,
            lambda caller, _c: authz.may_read_membership(caller),
            lambda _ctx, c, cursor: GroupMemberChange(
                change=_kind(c),
                group_id=group_id,
                user_id=to_global_id("User", c.model.user_id),
                cursor=cursor,
            ),
        )

    @strawberry.subscription(
        description="A node and every node below it as they are created, updated, moved or deleted."
    )
    async def org_node_changed(
        self, info: Info, id: strawberry.ID, after: str | None = None
    ) -> AsyncGenerator[OrgNodeChange, None]:
        path = node_path(id)
        if path is None:
            raise NotFound("no such org node")
        require(authz.may_run_org_subtree(info.context.caller), "read org trees")
        return _events(
            info,
            ("org", ORG_PATH_SEPARATOR.join(path)),
            after,
            lambda caller, _c: authz.may_read_org_node(caller),
            lambda _ctx, c, cursor: OrgNodeChange(
                change=_kind(c), node=OrgNode.from_record(c.model), cursor=cursor
            ),
        )

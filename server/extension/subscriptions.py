"""schema.graphql's subscriptions as an extension of the API the spec compiles to: each
follows what the spec's own subscription of its pattern follows (kept with `changes =
false`, access_patterns.toml) and answers each change in schema.graphql's shape."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from generated import authz
from generated.queries.user import get_users
from keygraph.api import Extension, changes, load_many
from keygraph.api.ids import global_id
from keygraph.caller import Caller

from .ids import local_of, path_of

EXTENSION = Extension('''
"""An order created, updated or deleted (as it was, when deleted)."""
type OrderChange {
  change: ChangeKind!
  order: Order!
  """Pass it as `after` to resume after this event."""
  cursor: String!
}

"""A user created, updated or deleted (as it was, when deleted)."""
type UserChange {
  change: ChangeKind!
  user: User!
  """Pass it as `after` to resume after this event."""
  cursor: String!
}

"""A user added to (CREATED) or removed from (DELETED) a group."""
type GroupMemberChange {
  change: ChangeKind!
  groupId: ID!
  userId: ID!
  """Pass it as `after` to resume after this event."""
  cursor: String!
  """The member; null when the user no longer exists."""
  user: User
}

"""
A node of the subscribed subtree created, updated (renamed, its children changed) or
deleted; a move is its deletion at the old path and creation at the new one.
"""
type OrgNodeChange {
  change: ChangeKind!
  node: OrgNode!
  """Pass it as `after` to resume after this event."""
  cursor: String!
}

extend type Subscription {
  """
  A user's orders as they are created, updated or deleted; FORBIDDEN for a caller who may
  not list them.
  """
  orderChanged(userId: ID!, after: String = null): OrderChange!
  """A user as it is created, updated or deleted."""
  userChanged(id: ID!, after: String = null): UserChange!
  """Users added to and removed from a group."""
  groupMembersChanged(groupId: ID!, after: String = null): GroupMemberChange!
  """
  A node and every node below it as they are created, updated, moved or deleted.
  """
  orgNodeChanged(id: ID!, after: String = null): OrgNodeChange!
}
''')


def may_follow_orders(caller: Caller, *, user_id: str) -> bool:
    """Who may follow a user's orders: who may list them (user_orders' rule on the user's
    id; the id of no user is refused as such)."""
    return authz.may_run_user_orders(caller, user_id=local_of(user_id, "User"))


@EXTENSION.field("Subscription.orderChanged", guard=may_follow_orders, follows="userOrdersChanged")
async def order_changed(
    _root: Any, info: Any, user_id: str, after: str | None = None
) -> AsyncIterator[dict[str, Any]]:
    """The user's orders by their copies in its partition (shown as orders)."""
    followed = {"user_id": local_of(user_id, "User")}
    async for change in changes(info, after, userOrdersChanged=followed):
        yield {"change": change.kind, "order": change.item, "cursor": change.cursor}


@EXTENSION.field("Subscription.userChanged", guard="get_user", follows="userChanged")
async def user_changed(
    _root: Any, info: Any, id: str, after: str | None = None
) -> AsyncIterator[dict[str, Any]]:
    async for change in changes(info, after, userChanged={"user_id": local_of(id, "User")}):
        yield {"change": change.kind, "user": change.item, "cursor": change.cursor}


@EXTENSION.field(
    "Subscription.groupMembersChanged", guard="group_members", follows="groupMembersChanged"
)
async def group_members_changed(
    _root: Any, info: Any, group_id: str, after: str | None = None
) -> AsyncIterator[dict[str, Any]]:
    local = local_of(group_id, "Group")
    async for change in changes(info, after, groupMembersChanged={"group_id": local}):
        member = change.item.user_id
        yield {
            "change": change.kind,
            "group_id": group_id,
            "user_id": global_id("User", [member]),
            "cursor": change.cursor,
            "member": member,
        }


@EXTENSION.field("GroupMemberChange.user", guard="get_users")
async def member(change: dict[str, Any], info: Any) -> Any:
    (user,) = await load_many(info.context, get_users, [change["member"]])
    return user


@EXTENSION.field(
    "Subscription.orgNodeChanged",
    guard="org_subtree",
    follows=("orgNodeChanged", "orgSubtreeChanged"),
)
async def org_node_changed(
    _root: Any, info: Any, id: str, after: str | None = None
) -> AsyncIterator[dict[str, Any]]:
    """The node (by its get pattern's watch) and those below it (org_subtree's), as one
    stream in the order they were written."""
    path = {"path": path_of(id)}
    async for change in changes(info, after, orgNodeChanged=path, orgSubtreeChanged=path):
        yield {"change": change.kind, "node": change.item, "cursor": change.cursor}

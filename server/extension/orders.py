"""schema.graphql's mutations of orders and groups, on the spec's API: an order's total is
computed before the spec's create writes it with its copy under its user
(server/domain/orders.py); a membership is both sides in one item, and a group's delete
leaves its memberships to a cleanup (server/domain/groups.py)."""

from __future__ import annotations

from typing import Any

from generated import authz
from generated.queries.group import get_group
from keygraph import errors
from keygraph.api import Extension
from keygraph.caller import Caller
from server.domain import groups, orders

from .ids import local_of
from .refusals import as_api_errors
from .writing import by_id, deleted, writer

EXTENSION = Extension('''
"""
A new order with 1 to 50 lines; the server computes the total, which must be at most
2147483647 cents (the largest Int): more is BAD_USER_INPUT.
"""
input CreateOrderInput {
  userId: ID!
  currency: String!
  items: [OrderItemInput!]!
}

"""
One line of a new order: quantity 1 to 10000, unitPriceCents 0 to 100000000, and quantity x
unitPriceCents at most 2147483647 (the largest Int).
"""
input OrderItemInput {
  sku: String!
  name: String!
  quantity: Int!
  unitPriceCents: Int!
}

"""A status change, checked against the version last read."""
input UpdateOrderStatusInput {
  id: ID!
  status: OrderStatus!
  expectedVersion: Int!
}

"""A new group."""
input CreateGroupInput {
  name: String!
}

extend type Mutation {
  """Create a PENDING order with its items, in one transaction."""
  createOrder(input: CreateOrderInput!): Order!
  """Change an order's status; a stale version is a CONFLICT."""
  updateOrderStatus(input: UpdateOrderStatusInput!): Order!
  """Delete an order; a stale expectedVersion is a CONFLICT."""
  deleteOrder(input: DeleteInput!): DeletePayload!
  """Create a group."""
  createGroup(input: CreateGroupInput!): Group!
  """Add a user to a group; adding a member again is a no-op."""
  addGroupMember(groupId: ID!, userId: ID!): Group!
  """Remove a user from a group; removing a non-member is a no-op."""
  removeGroupMember(groupId: ID!, userId: ID!): Group!
  """Delete a group with every membership; a stale expectedVersion is a CONFLICT."""
  deleteGroup(input: DeleteInput!): DeletePayload!
}
''')


@EXTENSION.field(
    "Mutation.createOrder", guard=by_id("User", authz.may_create_order, "user_id", at="user_id")
)
async def create_order(_parent: Any, info: Any, input: dict[str, Any]) -> Any:
    user_id = local_of(input["user_id"], "User")
    with as_api_errors():
        return await orders.create_order(
            writer(info), info.context.tenant, user_id, input["currency"], input["items"]
        )


@EXTENSION.field("Mutation.updateOrderStatus", guard=by_id("Order", authz.may_update_order))
async def update_order_status(_parent: Any, info: Any, input: dict[str, Any]) -> Any:
    order_id = local_of(input["id"], "Order")
    with as_api_errors():
        return await orders.update_order_status(
            writer(info), info.context.tenant, order_id, input["status"], input["expected_version"]
        )


@EXTENSION.field("Mutation.deleteOrder", guard=by_id("Order", authz.may_delete_order))
async def delete_order(_parent: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:
    return await deleted(info, input, "Order", orders.delete_order)


@EXTENSION.field("Mutation.createGroup", guard=authz.may_create_group)
async def create_group(_parent: Any, info: Any, input: dict[str, Any]) -> Any:
    with as_api_errors():
        return await groups.create_group(writer(info), info.context.tenant, input["name"])


def _may_membership(name: str) -> Any:
    """The guard of a membership's change: both ids of their types, then the user's rule."""
    may = getattr(authz, f"may_{name}_membership")

    def guard(caller: Caller, group_id: str, user_id: str) -> bool:
        local_of(group_id, "Group")
        return bool(may(caller, user_id=local_of(user_id, "User")))

    return guard


async def _membership(info: Any, group_id: str, user_id: str, add: bool) -> Any:
    """The group after adding or removing the member, read as its caller reads it."""
    ctx = info.context
    group, user = local_of(group_id, "Group"), local_of(user_id, "User")
    change = groups.add_member if add else groups.remove_member
    with as_api_errors():
        await change(writer(info), ctx.tenant, group, user)
    found = await get_group(ctx.session, ctx.tenant, group, consistent=True)
    if found is None:
        raise errors.NotFound("no such group")
    return found


@EXTENSION.field("Mutation.addGroupMember", guard=_may_membership("create"))
async def add_group_member(_parent: Any, info: Any, group_id: str, user_id: str) -> Any:
    return await _membership(info, group_id, user_id, add=True)


@EXTENSION.field("Mutation.removeGroupMember", guard=_may_membership("delete"))
async def remove_group_member(_parent: Any, info: Any, group_id: str, user_id: str) -> Any:
    return await _membership(info, group_id, user_id, add=False)


@EXTENSION.field("Mutation.deleteGroup", guard=by_id("Group", authz.may_delete_group))
async def delete_group(_parent: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:
    return await deleted(info, input, "Group", groups.delete_group)

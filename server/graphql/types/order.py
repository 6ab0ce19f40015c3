"""The Order type: an order with its line items, which always come inside the order's item."""

from __future__ import annotations

from datetime import datetime
from typing import cast

import strawberry
from strawberry.types.lazy_type import LazyType

from generated import authz
from generated.models.enums import OrderStatus
from generated.models.order import Order as OrderModel
from generated.models.user_order import UserOrder
from generated.queries.order import get_order
from server.authz import require
from server.errors import NotFound
from server.graphql import loaders
from server.graphql.context import Context, Info
from server.graphql.ids import to_global_id
from server.graphql.types.node import Node, build_node, register_node

strawberry.enum(OrderStatus, name="OrderStatus")


@strawberry.type(description="One line of an order.")
class OrderItem:
    sku: str
    name: str
    quantity: int
    unit_price_cents: int


@strawberry.type(description="An order with its line items; money in integer cents.")
class Order(Node):
    status: OrderStatus
    total_cents: int | None = strawberry.field(
        description="The sum of the lines' quantity x unitPriceCents, at most 2147483647. "
        "Null, with an error at this field, for a total stored beyond it before totals were "
        "bounded: the order and the lists holding it still answer."
    )
    currency: str
    created_at: datetime
    version: int
    items: list[OrderItem]
    user_id: strawberry.Private[str]

    @classmethod
    def from_model(cls, model: OrderModel | UserOrder) -> Order:
        return cls(
            id=to_global_id("Order", model.order_id),
            status=model.status,
            total_cents=model.total_cents,
            currency=model.currency,
            created_at=model.created_at,
            version=model.version,
            # the model's lines answer as OrderItems: the same fields, and the type has no
            # is_type_of to refuse them
            items=cast("list[OrderItem]", model.items),
            user_id=model.user_id,
        )

    # User by name and module, resolved when the schema is built: user.py imports this one.
    @strawberry.field(
        description="The user who placed the order; null with NOT_FOUND once the user is "
        "deleted and before its orders are.",
        graphql_type=LazyType("User", "server.graphql.types.user") | None,
    )
    async def user(self, info: Info) -> Node | None:
        require(authz.may_run_get_users(info.context.caller), "read users")
        model = await loaders.users(info.context).load(self.user_id)
        if model is None:
            raise NotFound("the order's user does not exist")
        return build_node("User", model, info.context.caller)


async def load_order(ctx: Context, order_id: str) -> Order | None:
    require(authz.may_run_get_order(ctx.caller), "read orders by id")
    model = await get_order(ctx.session, ctx.tenant, order_id, consistent=True)
    return None if model is None else Order.from_model(model)


register_node("Order", load_order)

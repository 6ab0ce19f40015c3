"""Root fields for orders: by id, by status; create and change status."""

from __future__ import annotations

import strawberry

from generated import authz
from generated.models.enums import OrderStatus
from generated.queries.order import orders_by_status
from server.authz import require
from server.domain import orders
from server.graphql.context import Info
from server.graphql.types.connection import Connection, connection_from_page
from server.graphql.types.node import lookup_id
from server.graphql.types.order import Order, load_order
from server.graphql.types.payloads import DeleteInput, DeletePayload, delete, local_id_of


@strawberry.input(
    description="One line of a new order: quantity 1 to 10000, unitPriceCents 0 to 100000000, "
    "and quantity x unitPriceCents at most 2147483647 (the largest Int)."
)
class OrderItemInput:
    sku: str
    name: str
    quantity: int
    unit_price_cents: int


@strawberry.input(
    description="A new order with 1 to 50 lines; the server computes the total, which must "
    "be at most 2147483647 cents (the largest Int): more is BAD_USER_INPUT."
)
class CreateOrderInput:
    user_id: strawberry.ID
    currency: str
    items: list[OrderItemInput]


@strawberry.input(description="A status change, checked against the version last read.")
class UpdateOrderStatusInput:
    id: strawberry.ID
    status: OrderStatus
    expected_version: int


@strawberry.type
class OrderQuery:
    @strawberry.field(description="An order with its items, in one read; null when absent.")
    async def order(self, info: Info, id: strawberry.ID) -> Order | None:
        order_id = lookup_id(id, "Order")
        return None if order_id is None else await load_order(info.context, order_id)

    @strawberry.field(
        description="The tenant's orders in one status, newest first; null with FORBIDDEN for "
        "a caller who may not list them."
    )
    async def orders_by_status(
        self, info: Info, status: OrderStatus, first: int | None = None, after: str | None = None
    ) -> Connection[Order] | None:
        ctx = info.context
        require(authz.may_run_orders_by_status(ctx.caller), "list orders by status")
        page = await orders_by_status(ctx.session, ctx.tenant, status, first=first, after=after)
        return connection_from_page(page, Order.from_model)


@strawberry.type
class OrderMutation:
    @strawberry.mutation(description="Create a PENDING order with its items, in one transaction.")
    async def create_order(self, info: Info, input: CreateOrderInput) -> Order:
        ctx = info.context
        user_id = local_id_of(input.user_id, "User")
        require(authz.may_create_order(ctx.caller, user_id=user_id), "create orders for this user")
        lines = [
            {
                "sku": item.sku,
                "name": item.name,
                "quantity": item.quantity,
                "unit_price_cents": item.unit_price_cents,
            }
            for item in input.items
        ]
        model = await orders.create_order(
            ctx.server_session, ctx.tenant, user_id, input.currency, lines
        )
        return Order.from_model(model)

    @strawberry.mutation(description="Change an order's status; a stale version is a CONFLICT.")
    async def update_order_status(self, info: Info, input: UpdateOrderStatusInput) -> Order:
        ctx = info.context
        order_id = local_id_of(input.id, "Order")
        require(authz.may_update_order(ctx.caller), "update orders")
        model = await orders.update_order_status(
            ctx.server_session, ctx.tenant, order_id, input.status, input.expected_version
        )
        return Order.from_model(model)

    @strawberry.mutation(description="Delete an order; a stale expectedVersion is a CONFLICT.")
    async def delete_order(self, info: Info, input: DeleteInput) -> DeletePayload:
        return await delete(
            info, input, "Order", authz.may_delete_order, "delete orders", orders.delete_order
        )

"""Orders: the order at its own key and its copy in the user's partition, always written
together; the line items live inside both."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from generated.keys import order as order_keys
from generated.keys import user as user_keys
from generated.keys import user_order as user_order_keys
from generated.models.enums import OrderStatus
from generated.models.order import Order
from generated.models.user_order import UserOrder
from generated.queries.order import get_order
from keygraph.ids import new_id
from keygraph.plan import Check, Delete, Item, Put, WriteAction
from keygraph.store import Session
from server.domain.tx import ABSENT, PRESENT, stale, transact, version_is
from server.errors import BadUserInput, Conflict, NotFound

MAX_CENTS = 2**31 - 1
"""The most cents an order's total, or one line's quantity x unit price, may come to: the
largest GraphQL Int, which answers them. More is refused before anything is written."""


def new_order(
    user_id: str,
    currency: str,
    lines: Sequence[Mapping[str, Any]],
    *,
    order_id: str | None = None,
    status: OrderStatus = OrderStatus.PENDING,
    now: datetime | None = None,
) -> Order:
    """A new order; its total is computed here as the sum of quantity x unit price, and
    BadUserInput when it or a line's amount exceeds MAX_CENTS."""
    amounts = [int(line["quantity"]) * int(line["unit_price_cents"]) for line in lines]
    for number, amount in enumerate(amounts, 1):
        if amount > MAX_CENTS:
            raise BadUserInput(
                f"line {number}: quantity x unitPriceCents is {amount}, more than {MAX_CENTS}"
            )
    total = sum(amounts)
    if total > MAX_CENTS:
        raise BadUserInput(f"the order's total is {total} cents, more than {MAX_CENTS}")
    return Order.model_validate(
        {
            "order_id": order_id or new_id(),
            "user_id": user_id,
            "status": status,
            "total_cents": total,
            "currency": currency,
            "created_at": now or datetime.now(UTC),
            "version": 1,
            "items": [dict(line) for line in lines],
        }
    )


def user_copy(order: Order) -> UserOrder:
    """The order's copy in its user's partition, validated from the order's own field
    values (its lines, of the same model, are taken as they are)."""
    return UserOrder.model_validate(dict(order))


def new_order_items(tenant: str, order: Order) -> list[Item]:
    """The order's items: at its own key and in its user's partition."""
    return [order.to_item(tenant), user_copy(order).to_item(tenant)]


def create_order_actions(tenant: str, order: Order) -> list[WriteAction]:
    """The user must exist; neither copy may overwrite anything."""
    return [
        Check(key=user_keys.key(tenant, order.user_id), conditions=PRESENT),
        *(Put(item=item, conditions=ABSENT) for item in new_order_items(tenant, order)),
    ]


async def create_order(
    s: Session, tenant: str, user_id: str, currency: str, lines: Sequence[Mapping[str, Any]]
) -> Order:
    order = new_order(user_id, currency, lines)
    exists = Conflict("an order with this id already exists")
    await transact(
        s.store,
        create_order_actions(tenant, order),
        {0: NotFound("no such user"), 1: exists, 2: exists},
    )
    return order


async def update_order_status(
    s: Session, tenant: str, order_id: str, status: OrderStatus, expected_version: int
) -> Order:
    current = await get_order(s, tenant, order_id, consistent=True)
    if current is None:
        raise NotFound("no such order")
    stale = Conflict(
        f"the order is at version {current.version}, not {expected_version}",
        currentVersion=current.version,
    )
    if current.version != expected_version:
        raise stale
    updated = Order.model_validate(
        {**current.model_dump(), "status": status, "version": current.version + 1}
    )
    condition = version_is(expected_version)
    actions: list[WriteAction] = [
        Put(item=updated.to_item(tenant), conditions=condition),
        Put(item=user_copy(updated).to_item(tenant), conditions=condition),
    ]
    await transact(s.store, actions, {0: stale, 1: stale})
    return updated


async def delete_order(s: Session, tenant: str, order_id: str, expected_version: int) -> None:
    """Delete an order: both copies, in one transaction."""
    current = await get_order(s, tenant, order_id, consistent=True)
    if current is None:
        raise NotFound("no such order")
    if current.version != expected_version:
        raise stale("order", current.version, expected_version)
    condition = version_is(expected_version)
    copy = user_copy(current)
    actions: list[WriteAction] = [
        Delete(order_keys.key(tenant, order_id), condition),
        Delete(
            user_order_keys.key(tenant, copy.user_id, copy.created_at, copy.order_id), condition
        ),
    ]
    conflict = stale("order", current.version + 1, expected_version)
    await transact(s.store, actions, {0: conflict, 1: conflict})

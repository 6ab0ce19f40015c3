"""Orders: the spec's writes keep an order and its copy in the user's partition together,
its user checked in the same transaction (keygraph.writes); the server computes the total."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from generated.api import API
from generated.models.enums import OrderStatus
from generated.models.order import Order
from keygraph import writes
from keygraph.ids import new_id
from keygraph.plan import Item
from keygraph.store import Session
from server.errors import BadUserInput

MAX_CENTS = 2**31 - 1
"""The most cents an order's total, or one line's quantity x unit price, may come to: the
largest GraphQL Int, which answers them. More is refused before anything is written."""

WRITES = API.writes["Order"]


def total_of(lines: Sequence[Mapping[str, Any]]) -> int:
    """The sum of quantity x unit price; BadUserInput when it or a line's amount exceeds
    MAX_CENTS."""
    amounts = [int(line["quantity"]) * int(line["unit_price_cents"]) for line in lines]
    for number, amount in enumerate(amounts, 1):
        if amount > MAX_CENTS:
            raise BadUserInput(
                f"line {number}: quantity x unitPriceCents is {amount}, more than {MAX_CENTS}"
            )
    total = sum(amounts)
    if total > MAX_CENTS:
        raise BadUserInput(f"the order's total is {total} cents, more than {MAX_CENTS}")
    return total


def order_values(
    user_id: str, currency: str, lines: Sequence[Mapping[str, Any]], status: OrderStatus
) -> dict[str, Any]:
    """What a new order holds that its creator gives or the server computes."""
    return {
        "user_id": user_id,
        "status": status,
        "total_cents": total_of(lines),
        "currency": currency,
        "items": [dict(line) for line in lines],
    }


def new_order(
    user_id: str,
    currency: str,
    lines: Sequence[Mapping[str, Any]],
    *,
    order_id: str | None = None,
    status: OrderStatus = OrderStatus.PENDING,
    now: datetime | None = None,
) -> Order:
    """A new order as a bulk load stores it, with the id and time it is given."""
    values = order_values(user_id, currency, lines, status)
    made = {"order_id": order_id or new_id(), "created_at": now or datetime.now(UTC)}
    return Order.model_validate({**values, **made, "version": 1})


def new_order_items(tenant: str, order: Order) -> list[Item]:
    """The order's items: at its own key and in its user's partition."""
    return writes.items_of(tenant, WRITES, order)


async def create_order(
    s: Session, tenant: str, user_id: str, currency: str, lines: Sequence[Mapping[str, Any]]
) -> Order:
    values = order_values(user_id, currency, lines, OrderStatus.PENDING)
    order: Order = await writes.create(s, tenant, WRITES, values)
    return order


async def update_order_status(
    s: Session, tenant: str, order_id: str, status: OrderStatus, expected_version: int
) -> Order:
    key = {"order_id": order_id}
    order: Order = await writes.update(s, tenant, WRITES, key, {"status": status}, expected_version)
    return order


async def delete_order(s: Session, tenant: str, order_id: str, expected_version: int) -> None:
    """Delete an order: both copies, in one transaction."""
    await writes.delete(s, tenant, WRITES, {"order_id": order_id}, expected_version)

"""A query pattern's subscription on an index (this repository's spec, ordersByStatusChanged
on GSI2): an order whose status changes is published on the partition it left and the one
it entered, so subscribers of both see it, and each sees only orders its pattern reads."""

from __future__ import annotations

from datetime import UTC, datetime

from generated.api import API
from generated.models.enums import OrderStatus
from generated.table import TABLE
from keygraph.api.watches import _followed, decoder
from keygraph.realtime.changes import Change
from keygraph.streams import StreamRecord
from server.domain.orders import new_order

AT = datetime(2026, 11, 28, tzinfo=UTC)
WATCH = "ordersByStatusChanged"


def paid(tenant: str) -> tuple[StreamRecord, Change]:
    """The record of an order of `tenant` paid (PENDING to PAID), and its change."""
    line = {"sku": "A", "name": "a", "quantity": 1, "unit_price_cents": 5}
    pending = new_order("u1", "EUR", [line], order_id="o1", now=AT)
    old = pending.to_item(tenant)
    new = pending.model_copy(update={"status": OrderStatus.PAID, "version": 2}).to_item(tenant)
    keys = {"PK": new["PK"], "SK": new["SK"]}
    record = StreamRecord("1", "MODIFY", keys, old, new, AT)
    change = decoder(API, TABLE)(record, "shard-0", {})
    assert change is not None
    return record, change


def sees(tenant: str, status: OrderStatus, change: Change) -> bool:
    """Whether a subscription of `tenant` to orders in `status` is sent the change."""
    topic, visible, _ = _followed(API.watches[WATCH], WATCH, TABLE, tenant, {"status": status})
    return topic in change.topics and visible(change)


def test_an_order_changing_status_reaches_both_partitions_subscribers() -> None:
    _, change = paid("acme")
    assert {topic for topic in change.topics if topic[0] == WATCH} == {
        (WATCH, "T#acme#STATUS#PENDING"),
        (WATCH, "T#acme#STATUS#PAID"),
    }
    assert sees("acme", OrderStatus.PAID, change)
    assert sees("acme", OrderStatus.PENDING, change)  # it left: shown once more, as it is
    assert not sees("acme", OrderStatus.SHIPPED, change)
    assert not sees("globex", OrderStatus.PAID, change)

"""A spec that is not this repo's (cases/webshop) generated and run on both stores, the way
docs/library.md shows it: a global catalog, date keys, struct attributes, an order read with its
line items in one Query, and summaries from an INCLUDE index."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from keygraph import CursorCodec, Session
from keygraph.plan import Put
from keygraph.stores import admin_of
from tests.conftest import StoreFactory
from tests.packages import Importer, generated

SPEC = Path(__file__).with_name("cases") / "webshop" / "spec.toml"
DAY = date(2026, 4, 18)


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Importer]:
    with generated(SPEC, "webshop", tmp_path_factory.mktemp("webshop")) as pkg:
        yield pkg


async def test_every_generated_function_reads_what_was_written(
    shop: Importer, store_factory: StoreFactory, kind: str
) -> None:
    store = await store_factory(kind, shop("table").TABLE)
    live = admin_of(store).describe()
    assert live is not None
    assert sorted(live.indexes) == ["ByStatus"]
    money = shop("models.money").Money
    product, order, item = (
        shop("models.product").Product,
        shop("models.order").Order,
        shop("models.order_item").OrderItem,
    )
    status = shop("models.enums").OrderStatus
    tea = product(sku="TEA", title="Green tea", price=money(amount=450, currency="EUR"))
    await store.put(Put(tea.to_item()))  # global: no tenant
    written: list[Any] = []
    for order_id, lines, state in (("O1", 2, "PAID"), ("O10", 1, "PAID"), ("O2", 3, "OPEN")):
        total = money(amount=450 * lines, currency="EUR")
        head = order(
            customer_id="c1",
            order_id=order_id,
            placed_on=DAY,
            status=status(state),
            total=total,
        )
        written.append(head)
        await store.put(Put(head.to_item("acme")))
        for line in range(lines):
            entry = item(
                customer_id="c1",
                order_id=order_id,
                placed_on=DAY,
                line=line,
                sku="TEA",
                quantity=1,
                price=tea.price,
            )
            await store.put(Put(entry.to_item("acme")))
    s = Session(store, CursorCodec(b"k" * 32))
    products, orders = shop("queries.product"), shop("queries.order")
    assert await products.product(s, "TEA") == tea
    catalog = await products.catalog(s)
    assert catalog.items == [tea]
    # O1's collection: the order and its two lines, not O10 (whose id O1 begins)
    collection = await orders.order_with_items(s, "acme", "c1", DAY, "O1")
    assert [type(x).__name__ for x in collection.items] == ["Order", "OrderItem", "OrderItem"]
    assert collection.items[0] == written[0]
    assert {x.order_id for x in collection.items} == {"O1"}
    assert [x.line for x in collection.items[1:]] == [0, 1]
    paid = await orders.orders_by_status(s, "acme", status.PAID)
    assert [(x.order_id, x.total.amount) for x in paid.items] == [("O10", 450), ("O1", 900)]
    assert type(paid.items[0]).__name__ == "OrderByStatusSummary"
    assert not hasattr(paid.items[0], "items")
    assert (await orders.orders_by_status(s, "globex", status.PAID)).items == []
    # a partition naming an enum value: the status is the pattern's, not an argument
    assert [x.order_id for x in (await orders.open_orders(s, "acme")).items] == ["O2"]

"""The committed generated/ tree, run on an in-memory store: keys, models and plans."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pydantic
import pytest

from generated.keys import org_node as org_node_keys
from generated.keys import user as user_keys
from generated.keys import user_order as user_order_keys
from generated.models.enums import OrderStatus
from generated.models.order import Order
from generated.models.order_item import OrderItem
from generated.models.org_node import OrgNode
from generated.models.shop import Shop
from generated.models.user import User
from generated.models.user_order import UserOrder
from generated.queries import order, org_node, shop, user, user_order
from generated.table import TABLE
from keygraph.cursor import CursorCodec
from keygraph.errors import BadArgument, InvalidCursor
from keygraph.store import Session
from tests.codegen.recording import Recording
from tests.conftest import StoreFactory

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def _session(store: Recording) -> Session:
    return Session(store=store, cursors=CursorCodec(b"0123456789abcdef0123"))


def _order(n: int, user_id: str = "u1", status: OrderStatus = OrderStatus.PAID) -> Order:
    line = OrderItem(sku="SKU-1", name="thing", quantity=2, unit_price_cents=150)
    return Order(
        order_id=f"o{n}",
        user_id=user_id,
        status=status,
        total_cents=300,
        currency="EUR",
        created_at=T0 + timedelta(days=n),
        version=1,
        items=[line],
    )


def test_keys_follow_the_templates_and_parse_back() -> None:
    assert user_keys.key("acme", "u#1") == {"PK": "T#acme#USER#u%231", "SK": "PROFILE"}
    assert user_keys.parse_key(user_keys.key("acme", "u#1")) == ("acme", "u#1")
    sk = user_order_keys.key("acme", "u1", T0, "o1")["SK"]
    assert sk == "ORDER#2024-05-01T12:00:00.000000Z#o1"
    parts = org_node_keys.parse_key(org_node_keys.key("acme", ("root", "e#ng")))
    assert parts.path == ("root", "e#ng")
    with pytest.raises(BadArgument):
        user_keys.parse_key({"PK": "T#acme#GROUP#u1", "SK": "PROFILE"})
    with pytest.raises(BadArgument):
        user_keys.key("acme", "")


def test_models_round_trip_through_items() -> None:
    placed = _order(1)
    item = UserOrder.model_validate(placed.model_dump()).to_item("acme")
    assert item["_type"] == "USER_ORDER"
    assert item["SK"] == "ORDER#2024-05-02T12:00:00.000000Z#o1"
    assert UserOrder.from_item(item).model_dump() == placed.model_dump()
    shop_item = Shop(
        shop_id="s1",
        name="n",
        lat=52.5,
        lng=13.4,
        geohash="u33dc0cpp",
        geo_cell="u33",
        created_at=T0,
    ).to_item("acme")
    assert shop_item["lat"] == Decimal("52.5")
    local = datetime(2024, 5, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    assert User(user_id="u", email="a@b.c", name="A", created_at=local, version=1).created_at == T0
    with pytest.raises(pydantic.ValidationError):
        User(user_id="u", email="nope", name="A", created_at=T0, version=1)


async def test_gets_and_batch_gets_answer_in_order(store_factory: StoreFactory, kind: str) -> None:
    store = Recording(await store_factory(kind, TABLE))
    s = _session(store)
    await store.add(
        User(user_id="u1", email="a@b.c", name="A", created_at=T0, version=1).to_item("acme")
    )
    assert (await user.get_user(s, "acme", "u1")) is not None
    assert (await user.get_user(s, "other", "u1")) is None
    found = await user.get_users(s, "acme", ["u2", "u1", "u1"])
    assert [u.user_id if u else None for u in found] == [None, "u1", "u1"]
    await store.add(
        OrgNode(
            node_id="eng",
            path=("root", "eng"),
            parent_ref="root",
            name="Eng",
            depth=1,
            created_at=T0,
        ).to_item("acme")
    )
    nodes = await org_node.get_org_nodes(s, "acme", [("root", "eng"), ("root",)])
    assert [n.name if n else None for n in nodes] == ["Eng", None]


async def test_query_pages_newest_first_with_signed_cursors(
    store_factory: StoreFactory, kind: str
) -> None:
    store = Recording(await store_factory(kind, TABLE), 2)
    s = _session(store)
    for n in range(5):
        await store.add(UserOrder.model_validate(_order(n).model_dump()).to_item("acme"))
        await store.add(_order(n).to_item("acme"))
    first = await user_order.user_orders(s, "acme", "u1", first=3)
    assert [o.order_id for o in first.items] == ["o4", "o3", "o2"]
    assert first.cursor is not None
    rest = await user_order.user_orders(s, "acme", "u1", first=3, after=first.cursor)
    assert [o.order_id for o in rest.items] == ["o1", "o0"]
    assert rest.cursor is None
    with pytest.raises(InvalidCursor):
        await user_order.user_orders(s, "acme", "u2", after=first.cursor)
    with pytest.raises(BadArgument):
        await user_order.user_orders(s, "acme", "u1", first=101)
    ranged = await user_order.user_orders_between(
        s, "acme", "u1", T0 + timedelta(days=1), T0 + timedelta(days=3)
    )
    # "ORDER#<to>" sorts before "ORDER#<to>#o3": the range is [from, to), as documented.
    assert [o.order_id for o in ranged.items] == ["o2", "o1"]
    paid = await order.orders_by_status(s, "acme", OrderStatus.PAID, first=10)
    assert [o.order_id for o in paid.items] == ["o4", "o3", "o2", "o1", "o0"]


async def test_a_reversed_range_is_a_bad_argument_before_any_store_call(
    store_factory: StoreFactory, kind: str
) -> None:
    store = Recording(await store_factory(kind, TABLE))
    s = _session(store)
    later, earlier = T0 + timedelta(days=3), T0 + timedelta(days=1)
    reversed_range = r"^from \('ORDER#2024-05-04T12:00:00\.000000Z'.*\) sorts after to \("
    with pytest.raises(BadArgument, match=reversed_range):
        await user_order.user_orders_between(s, "acme", "u1", later, earlier)
    with pytest.raises(BadArgument, match=r"^geohash_from \('u33f'.*sorts after geohash_to"):
        shop.plan_shops_in_cell("acme", "u33", "u33f", "u33d", limit=10)
    assert store.queries == []
    assert (await user_order.user_orders_between(s, "acme", "u1", later, later)).items == []
    assert len(store.queries) == 1


def test_plans_are_pure_data() -> None:
    plan = shop.plan_shops_in_cell("acme", "u33", "u33d", "u33f~", limit=10)
    assert plan.index == "GSI2"
    assert plan.partition == "T#acme#GEO#u33"
    assert plan.sort is not None
    assert (plan.sort.op, plan.sort.value, plan.sort.high) == ("between", "u33d", "u33f~")
    assert plan.floats == {"lat", "lng"}


def test_a_path_must_not_be_a_plain_string() -> None:
    with pytest.raises(BadArgument):
        org_node_keys.key("acme", "root")

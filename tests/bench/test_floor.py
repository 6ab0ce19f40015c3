import pytest

from bench.floor import SCHEMA, FloorContext
from bench.floor_data import FloorData, load_floor_data
from bench.queries import to_global_id
from keygraph.plan import Item
from server.domain.geo import haversine_km
from server.seed.tenant import SeedSizes, build_items

SIZES = SeedSizes(users=12, orders=60, groups=3, org_nodes=30, org_depth=3, shops=300)


@pytest.fixture(scope="module")
def items() -> list[Item]:
    return build_items("acme", SIZES, 5) + build_items("globex", SIZES, 5)


@pytest.fixture(scope="module")
def data(items: list[Item]) -> FloorData:
    return load_floor_data(items, "acme")


def test_keeps_only_the_tenants_items(data: FloorData) -> None:
    assert len(data.users) == SIZES.users
    assert len(data.org_nodes) == SIZES.org_nodes
    assert len(data.shops) == SIZES.shops
    assert sum(len(orders) for orders in data.user_orders.values()) == SIZES.orders


def test_orders_are_newest_first_and_users_oldest_first(data: FloorData) -> None:
    for orders in data.user_orders.values():
        times = [order["created_at"] for order in orders]
        assert times == sorted(times, reverse=True)
    created = [data.users[uid]["created_at"] for uid in data.users_in_order]
    assert created == sorted(created)


def test_descendants_are_the_nodes_below(data: FloorData) -> None:
    for node in data.org_in_order:
        path = tuple(node["path"])
        expected = {
            tuple(other["path"])
            for other in data.org_in_order
            if len(other["path"]) > len(path) and tuple(other["path"][: len(path)]) == path
        }
        assert {tuple(found["path"]) for found in data.descendants(node)} == expected


@pytest.mark.parametrize(("radius", "first"), [(5.0, 1000), (5.0, 3), (12.0, 40), (50.0, 10)])
def test_shops_near_matches_a_scan_of_every_shop(
    data: FloorData, radius: float, first: int
) -> None:
    lat, lng = 52.52, 13.405
    scan = sorted(
        (haversine_km(lat, lng, float(s["lat"]), float(s["lng"])), s["shop_id"])
        for s in data.shops
        if haversine_km(lat, lng, float(s["lat"]), float(s["lng"])) <= radius
    )
    near = data.shops_near(lat, lng, radius, first)
    assert scan
    assert [(distance, shop["shop_id"]) for distance, shop in near] == scan[:first]


async def test_schema_answers_from_the_dicts(data: FloorData) -> None:
    user_id = data.users_in_order[0]
    user = data.users[user_id]
    result = await SCHEMA.execute(
        "query($id: ID!) { user(id: $id) { id email orders(first: 2) {"
        " edges { node { totalCents items { quantity unitPriceCents } } }"
        " pageInfo { hasNextPage } } } }",
        variable_values={"id": to_global_id("User", user_id)},
        context_value=FloorContext(data),
    )
    assert result.errors is None
    assert result.data is not None
    answer = result.data["user"]
    assert answer["email"] == user["email"]
    orders = data.user_orders[user_id]
    edges = answer["orders"]["edges"]
    assert len(edges) == min(2, len(orders))
    for edge in edges:
        node = edge["node"]
        lines = node["items"]
        assert node["totalCents"] == sum(
            line["quantity"] * line["unitPriceCents"] for line in lines
        )
    assert answer["orders"]["pageInfo"]["hasNextPage"] == (len(orders) > 2)


async def test_create_order_is_visible_to_the_next_read(items: list[Item]) -> None:
    data = load_floor_data(items, "acme")
    user_id = data.users_in_order[-1]
    before = len(data.user_orders.get(user_id, []))
    result = await SCHEMA.execute(
        "mutation($input: CreateOrderInput!) { createOrder(input: $input) { status totalCents } }",
        variable_values={
            "input": {
                "userId": to_global_id("User", user_id),
                "currency": "EUR",
                "items": [{"sku": "A", "name": "a", "quantity": 3, "unitPriceCents": 250}],
            }
        },
        context_value=FloorContext(data),
    )
    assert result.errors is None
    assert result.data == {"createOrder": {"status": "PENDING", "totalCents": 750}}
    assert len(data.user_orders[user_id]) == before + 1

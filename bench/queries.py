"""The benchmark's GraphQL operations and the ids they run on, picked from the seeded data.

`levels` is the number of sequential store reads the query needs at best: one per level of
the response that has to be fetched before the next can be asked for. The goal is that the
server's measured waves equal it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.floor_data import FloorData, Item
from keygraph.api.ids import global_id, parse_global_id

_ORDER_FIELDS = "id status totalCents currency createdAt items { sku name quantity unitPriceCents }"

Q1 = "query Q1($id: ID!) { user(id: $id) { id email name createdAt version } }"
Q2 = (
    "query Q2($id: ID!) { user(id: $id) { id name orders(first: 20) {"
    f" edges {{ node {{ {_ORDER_FIELDS} }} }} pageInfo {{ hasNextPage }} }} }} }}"
)
Q3 = (
    "query Q3 { users(first: 50) { edges { node { id name"
    f" orders(first: 5) {{ edges {{ node {{ {_ORDER_FIELDS} }} }} }}"
    " groups { edges { node { id name } } } } } pageInfo { hasNextPage } } }"
)
Q4 = (
    "query Q4($id: ID!) { group(id: $id) { id name members(first: 100) {"
    " edges { node { id name email } } pageInfo { hasNextPage } } } }"
)
Q5 = (
    "query Q5($id: ID!) { orgNode(id: $id) { id name depth descendants(first: 100) {"
    " edges { node { id name depth } } pageInfo { hasNextPage } } } }"
)
Q6 = (
    "query Q6($lat: Float!, $lng: Float!) { shopsNear(lat: $lat, lng: $lng, radiusKm: 5,"
    " first: 50) { shop { id name lat lng } distanceKm } }"
)
M1 = (
    "mutation M1($input: CreateOrderInput!) { createOrder(input: $input) {"
    " status totalCents currency items { sku name quantity unitPriceCents } } }"
)


@dataclass(frozen=True, slots=True)
class Operation:
    name: str
    title: str
    query: str
    variables: dict[str, Any]
    levels: int
    write: bool = False

    def body(self) -> dict[str, Any]:
        return {"query": self.query, "variables": self.variables}


def to_global_id(type_name: str, local: str) -> str:
    """The API's global id of an item whose key is the one text `local`."""
    return global_id(type_name, [local])


def local_id(value: str) -> str:
    """The one text part of the key a global id names."""
    _, parts = parse_global_id(value)
    local: str = parts[0]
    return local


def _most(counts: dict[str, list[Any]]) -> str:
    return max(sorted(counts), key=lambda key: len(counts[key]))


def _subtree_near(data: FloorData, size: int) -> Item:
    """The org node whose subtree size is closest to `size` (ties: the deeper node)."""
    return min(
        data.org_in_order,
        key=lambda node: (abs(len(data.descendants(node)) - size), -int(node["depth"])),
    )


def _busiest_spot(data: FloorData) -> tuple[float, float]:
    """The mean position of the shops: the centre of the seeded region."""
    lats = [float(shop["lat"]) for shop in data.shops]
    lngs = [float(shop["lng"]) for shop in data.shops]
    return round(sum(lats) / len(lats), 6), round(sum(lngs) / len(lngs), 6)


def operations(data: FloorData) -> list[Operation]:
    """Q1-Q6 and M1 with their variables picked from one tenant's data."""
    first_user = data.users_in_order[0]
    busiest_user = _most(data.user_orders)
    biggest_group = _most(data.group_members)
    subtree = _subtree_near(data, 200)
    lat, lng = _busiest_spot(data)
    order_input = {
        "userId": to_global_id("User", data.users_in_order[-1]),
        "currency": "EUR",
        "items": [
            {"sku": f"SKU-{n}", "name": f"Bench item {n}", "quantity": n, "unitPriceCents": 100 * n}
            for n in (1, 2, 3)
        ],
    }
    return [
        Operation("Q1", "user(id)", Q1, {"id": to_global_id("User", first_user)}, 1),
        Operation(
            "Q2",
            "user + 20 orders + items",
            Q2,
            {"id": to_global_id("User", busiest_user)},
            2,
        ),
        Operation("Q3", "50 users x 5 orders + groups", Q3, {}, 2),
        Operation(
            "Q4", "a group's 100 members", Q4, {"id": to_global_id("Group", biggest_group)}, 3
        ),
        Operation(
            "Q5",
            "org subtree (descendants)",
            Q5,
            {"id": to_global_id("OrgNode", ".".join(subtree["path"]))},
            2,
        ),
        Operation("Q6", "shopsNear 5 km", Q6, {"lat": lat, "lng": lng}, 1),
        Operation("M1", "createOrder, 3 items", M1, {"input": order_input}, 1, write=True),
    ]

"""The benchmark dataset of one tenant held in plain dicts, in the orders the store's keys
give (so the floor answers with the same items in the same order as keygraph).

It is built from the stored items themselves: every item carries its `_type` and its key
attributes, and sorting by a key attribute reproduces the order a Query on that key returns.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from server.domain.geo import FIRST_RING_KM, INLINE_MAX_CELLS, cover_circle, haversine_km, next_ring

Item = Mapping[str, Any]


@dataclass
class FloorData:
    """One tenant's items, indexed the way the access patterns read them."""

    users: dict[str, Item] = field(default_factory=dict)
    users_in_order: list[str] = field(default_factory=list)
    orders: dict[str, Item] = field(default_factory=dict)
    user_orders: dict[str, list[Item]] = field(default_factory=dict)
    groups: dict[str, Item] = field(default_factory=dict)
    user_groups: dict[str, list[str]] = field(default_factory=dict)
    group_members: dict[str, list[str]] = field(default_factory=dict)
    org_nodes: dict[str, Item] = field(default_factory=dict)
    org_by_path: dict[tuple[str, ...], Item] = field(default_factory=dict)
    org_children: dict[str, list[Item]] = field(default_factory=dict)
    org_in_order: list[Item] = field(default_factory=list)
    org_sort_keys: list[str] = field(default_factory=list)
    shops: list[Item] = field(default_factory=list)
    shop_geohashes: list[str] = field(default_factory=list)

    def descendants(self, node: Item) -> list[Item]:
        """The nodes under `node`, in the order of their sort keys (a begins_with Query)."""
        prefix = node["SK"] + "#"
        start = bisect.bisect_left(self.org_sort_keys, prefix)
        end = bisect.bisect_left(self.org_sort_keys, prefix + "\U0010ffff")
        return self.org_in_order[start:end]

    def ancestors(self, node: Item) -> list[Item]:
        path = tuple(node["path"])
        return [self.org_by_path[path[:depth]] for depth in range(1, len(path))]

    def shops_near(
        self, lat: float, lng: float, radius_km: float, first: int
    ) -> list[tuple[float, Item]]:
        """(distance, shop) of the `first` shops nearest the point within the radius, nearest
        first, found as the server finds them: in widening circles, each read through the
        geohash cells covering it (as many as the embedded store's coverings have)."""
        if first == 0:
            return []
        ring = min(radius_km, FIRST_RING_KM)
        near = self._within(lat, lng, ring)
        while len(near) < first and ring < radius_km:
            ring = next_ring(ring, len(near), first, radius_km)
            near = self._within(lat, lng, ring)
        return near[:first]

    def _within(self, lat: float, lng: float, radius_km: float) -> list[tuple[float, Item]]:
        """(distance, shop) within the radius, nearest first (ties by id)."""
        found: list[tuple[float, str, Item]] = []
        for prefixes in cover_circle(lat, lng, radius_km, INLINE_MAX_CELLS).cells.values():
            for prefix in prefixes:
                start = bisect.bisect_left(self.shop_geohashes, prefix)
                end = bisect.bisect_left(self.shop_geohashes, prefix + "~")
                for shop in self.shops[start:end]:
                    distance = haversine_km(lat, lng, float(shop["lat"]), float(shop["lng"]))
                    if distance <= radius_km:
                        found.append((distance, shop["shop_id"], shop))
        found.sort(key=lambda entry: (entry[0], entry[1]))
        return [(distance, shop) for distance, _, shop in found]


def _tenant_of(item: Item) -> str:
    """The tenant of an item: every partition key starts with "T#<tenant>#"."""
    return str(item["PK"]).split("#", 2)[1]


def load_floor_data(items: Iterable[Item], tenant: str) -> FloorData:
    """Index one tenant's items; items of other tenants are skipped."""
    data = FloorData()
    user_orders: list[Item] = []
    memberships: list[Item] = []
    users: list[Item] = []
    shops: list[Item] = []
    for item in items:
        if _tenant_of(item) != tenant:
            continue
        kind = item["_type"]
        if kind == "USER":
            data.users[item["user_id"]] = item
            users.append(item)
        elif kind == "ORDER":
            data.orders[item["order_id"]] = item
        elif kind == "USER_ORDER":
            user_orders.append(item)
        elif kind == "GROUP":
            data.groups[item["group_id"]] = item
        elif kind == "MEMBER":
            memberships.append(item)
        elif kind == "ORG_NODE":
            data.org_nodes[item["node_id"]] = item
            data.org_by_path[tuple(item["path"])] = item
        elif kind == "SHOP":
            shops.append(item)
    data.users_in_order = [user["user_id"] for user in sorted(users, key=lambda u: u["GSI1SK"])]
    for entry in sorted(user_orders, key=lambda o: o["SK"], reverse=True):
        data.user_orders.setdefault(entry["user_id"], []).append(entry)
    for member in sorted(memberships, key=lambda m: m["SK"]):
        data.user_groups.setdefault(member["user_id"], []).append(member["group_id"])
    for member in sorted(memberships, key=lambda m: m["GSI1SK"]):
        data.group_members.setdefault(member["group_id"], []).append(member["user_id"])
    data.org_in_order = sorted(data.org_nodes.values(), key=lambda n: n["SK"])
    data.org_sort_keys = [node["SK"] for node in data.org_in_order]
    for node in sorted(data.org_nodes.values(), key=lambda n: (n["name"], n["node_id"])):
        data.org_children.setdefault(node["parent_ref"], []).append(node)
    data.shops = sorted(shops, key=lambda s: s["GSI2SK"])
    data.shop_geohashes = [shop["geohash"] for shop in data.shops]
    return data

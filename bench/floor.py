"""The floor: the benchmark's GraphQL queries answered by a Strawberry schema over in-memory
dicts (bench.floor_data) instead of a store, its connections and global ids those of the
peer's schema (bench/peer/schema.py). Same type and field names as keygraph's schema
for every field the benchmark asks for, so the responses are the same; what is left is the
cost of GraphQL itself, which keygraph can approach but never beat.

Connections carry no cursors here (keygraph's are signed store keys; `after` is an offset);
the benchmark's queries ask for `pageInfo { hasNextPage }`, never for cursors, so the answers
still match.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any, TypeVar

import orjson
import strawberry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.extensions import ParserCache, ValidationCache

from bench.floor_data import FloorData, Item
from bench.peer.schema import Connection, connection
from bench.peer.schema import global_id as to_global_id
from bench.peer.schema import local_id as local_of
from keygraph.ids import new_id
from keygraph.keycodec import format_datetime, parse_datetime

S = TypeVar("S")
T = TypeVar("T")


@dataclass
class FloorContext:
    data: FloorData


FloorInfo = strawberry.Info[FloorContext, None]


def _page(
    items: list[S], first: int | None, after: str | None, convert: Callable[[S], T]
) -> Connection[T]:
    """The page of `first` items from offset `after`, each made a node by `convert`."""
    start = int(after) if after is not None else 0
    end = start + (first if first is not None else 20)
    return connection([convert(item) for item in items[start:end]], end < len(items))


@strawberry.enum
class OrderStatus(Enum):
    PENDING = "PENDING"
    PAID = "PAID"
    SHIPPED = "SHIPPED"
    DELIVERED = "DELIVERED"
    CANCELLED = "CANCELLED"


@strawberry.type
class OrderItem:
    sku: str
    name: str
    quantity: int
    unit_price_cents: int


@strawberry.type
class User:
    id: strawberry.ID
    email: str
    name: str
    created_at: datetime
    version: int
    user_id: strawberry.Private[str]

    @strawberry.field
    def orders(
        self, info: FloorInfo, first: int | None = None, after: str | None = None
    ) -> Connection[Order]:
        entries = info.context.data.user_orders.get(self.user_id, [])
        return _page(entries, first, after, order_of)

    @strawberry.field
    def groups(
        self, info: FloorInfo, first: int | None = None, after: str | None = None
    ) -> Connection[Group]:
        data = info.context.data
        return _page(
            data.user_groups.get(self.user_id, []),
            first,
            after,
            lambda gid: group_of(data.groups[gid]),
        )


@strawberry.type
class Order:
    id: strawberry.ID
    status: OrderStatus
    total_cents: int
    currency: str
    created_at: datetime
    version: int
    items: list[OrderItem]
    user_id: strawberry.Private[str]

    @strawberry.field
    def user(self, info: FloorInfo) -> User | None:
        found = info.context.data.users.get(self.user_id)
        return user_of(found) if found is not None else None


@strawberry.type
class Group:
    id: strawberry.ID
    name: str
    created_at: datetime
    group_id: strawberry.Private[str]

    @strawberry.field
    def members(
        self, info: FloorInfo, first: int | None = None, after: str | None = None
    ) -> Connection[User]:
        data = info.context.data
        return _page(
            data.group_members.get(self.group_id, []),
            first,
            after,
            lambda uid: user_of(data.users[uid]),
        )


@strawberry.type
class OrgNode:
    id: strawberry.ID
    name: str
    depth: int
    item: strawberry.Private[Item]

    @strawberry.field
    def parent(self, info: FloorInfo) -> OrgNode | None:
        found = info.context.data.org_by_path.get(tuple(self.item["path"][:-1]))
        return org_node_of(found) if found is not None else None

    @strawberry.field
    def children(self, info: FloorInfo) -> list[OrgNode]:
        nodes = info.context.data.org_children.get(self.item["node_id"], [])
        return [org_node_of(node) for node in nodes]

    @strawberry.field
    def descendants(
        self, info: FloorInfo, first: int | None = None, after: str | None = None
    ) -> Connection[OrgNode]:
        return _page(info.context.data.descendants(self.item), first, after, org_node_of)

    @strawberry.field
    def ancestors(self, info: FloorInfo) -> list[OrgNode]:
        return [org_node_of(node) for node in info.context.data.ancestors(self.item)]


@strawberry.type
class Shop:
    id: strawberry.ID
    name: str
    lat: float
    lng: float


@strawberry.type
class ShopDistance:
    shop: Shop
    distance_km: float


def user_of(item: Item) -> User:
    return User(
        id=to_global_id("User", item["user_id"]),
        email=item["email"],
        name=item["name"],
        created_at=parse_datetime(item["created_at"]),
        version=int(item["version"]),
        user_id=item["user_id"],
    )


def order_of(item: Item) -> Order:
    return Order(
        id=to_global_id("Order", item["order_id"]),
        status=OrderStatus(item["status"]),
        total_cents=int(item["total_cents"]),
        currency=item["currency"],
        created_at=parse_datetime(item["created_at"]),
        version=int(item["version"]),
        items=[
            OrderItem(
                sku=line["sku"],
                name=line["name"],
                quantity=int(line["quantity"]),
                unit_price_cents=int(line["unit_price_cents"]),
            )
            for line in item["items"]
        ],
        user_id=item["user_id"],
    )


def group_of(item: Item) -> Group:
    return Group(
        id=to_global_id("Group", item["group_id"]),
        name=item["name"],
        created_at=parse_datetime(item["created_at"]),
        group_id=item["group_id"],
    )


def org_node_of(item: Item) -> OrgNode:
    """Org node ids carry the node's whole path, its ids joined by "."."""
    return OrgNode(
        id=to_global_id("OrgNode", ".".join(item["path"])),
        name=item["name"],
        depth=len(item["path"]) - 1,
        item=item,
    )


def shop_of(item: Item) -> Shop:
    return Shop(
        id=to_global_id("Shop", item["shop_id"]),
        name=item["name"],
        lat=float(item["lat"]),
        lng=float(item["lng"]),
    )


@strawberry.type
class Query:
    @strawberry.field
    def user(self, info: FloorInfo, id: strawberry.ID) -> User | None:
        found = info.context.data.users.get(local_of(id, "User") or "")
        return user_of(found) if found is not None else None

    @strawberry.field
    def users(
        self, info: FloorInfo, first: int | None = None, after: str | None = None
    ) -> Connection[User]:
        data = info.context.data
        return _page(data.users_in_order, first, after, lambda uid: user_of(data.users[uid]))

    @strawberry.field
    def group(self, info: FloorInfo, id: strawberry.ID) -> Group | None:
        found = info.context.data.groups.get(local_of(id, "Group") or "")
        return group_of(found) if found is not None else None

    @strawberry.field
    def org_node(self, info: FloorInfo, id: strawberry.ID) -> OrgNode | None:
        path = tuple((local_of(id, "OrgNode") or "").split("."))
        found = info.context.data.org_by_path.get(path)
        return org_node_of(found) if found is not None else None

    @strawberry.field
    def shops_near(
        self, info: FloorInfo, lat: float, lng: float, radius_km: float, first: int | None = None
    ) -> list[ShopDistance]:
        near = info.context.data.shops_near(lat, lng, radius_km, 20 if first is None else first)
        return [ShopDistance(shop=shop_of(shop), distance_km=distance) for distance, shop in near]


@strawberry.input
class OrderItemInput:
    sku: str
    name: str
    quantity: int
    unit_price_cents: int


@strawberry.input
class CreateOrderInput:
    user_id: strawberry.ID
    currency: str
    items: list[OrderItemInput]


@strawberry.type
class Mutation:
    @strawberry.mutation
    def create_order(self, info: FloorInfo, input: CreateOrderInput) -> Order:
        data = info.context.data
        user_id = local_of(input.user_id, "User") or ""
        lines: list[dict[str, Any]] = [
            {
                "sku": line.sku,
                "name": line.name,
                "quantity": line.quantity,
                "unit_price_cents": line.unit_price_cents,
            }
            for line in input.items
        ]
        created = format_datetime(datetime.now(UTC))
        item: dict[str, Any] = {
            "order_id": new_id(),
            "user_id": user_id,
            "status": OrderStatus.PENDING.value,
            "total_cents": sum(line["quantity"] * line["unit_price_cents"] for line in lines),
            "currency": input.currency,
            "created_at": created,
            "version": 1,
            "items": lines,
        }
        data.orders[item["order_id"]] = item
        data.user_orders.setdefault(user_id, []).insert(0, item)
        return order_of(item)


SCHEMA = strawberry.Schema(
    query=Query,
    mutation=Mutation,
    extensions=[lambda: ParserCache(maxsize=512), lambda: ValidationCache(maxsize=512)],
)
"""Parsed and validated documents are cached, as keygraph's are: the floor is the least
GraphQL can cost on this stack."""


class FloorGraphQL(GraphQL[FloorContext, None]):
    """Strawberry's own ASGI view over the floor schema, one FloorData for every request;
    JSON bodies through orjson, as keygraph's."""

    def __init__(self, data: FloorData) -> None:
        super().__init__(SCHEMA, graphql_ide=None)
        self._context = FloorContext(data)

    def decode_json(self, data: str | bytes) -> object:
        return orjson.loads(data)

    def encode_json(self, data: object) -> bytes:
        return orjson.dumps(data)

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> FloorContext:
        return self._context


def floor_app(data: FloorData) -> Starlette:
    """The floor at /graphql, with the same /healthz probe as keygraph's app."""

    async def healthz(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(routes=[Route("/healthz", healthz), Route("/graphql", FloorGraphQL(data))])

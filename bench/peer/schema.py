"""The peer's Strawberry schema for Q1-Q3: the same type and field names as keygraph's, each
field read through PynamoDB. Reads go through per-request DataLoaders: users and groups by key
in one BatchGetItem per batch; a user's orders by one Query per user (DynamoDB has no batched
Query), the batch's Queries running side by side. PynamoDB's calls block, so each runs in the
event loop's default thread pool (asyncio.to_thread), as sync clients are run under ASGI."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import Enum
from typing import Generic, TypeVar

import strawberry
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.dataloader import DataLoader
from strawberry.extensions import ParserCache, ValidationCache

from bench.peer.models import GroupItem, UserItem, UserOrderItem

Node = TypeVar("Node")
Keyed = TypeVar("Keyed", UserItem, GroupItem)
DEFAULT_PAGE = 20


def global_id(type_name: str, local_id: str) -> strawberry.ID:
    """A Relay global id: base64url of "Type:id", unpadded."""
    raw = base64.urlsafe_b64encode(f"{type_name}:{local_id}".encode()).rstrip(b"=")
    return strawberry.ID(raw.decode("ascii"))


def local_id(global_id: str, type_name: str) -> str | None:
    """The local id inside a global id naming `type_name`, else None."""
    try:
        text = base64.urlsafe_b64decode(global_id + "=" * (-len(global_id) % 4)).decode()
    except ValueError:
        return None
    found_type, _, found_id = text.partition(":")
    return found_id if found_type == type_name and found_id else None


@strawberry.type
class PageInfo:
    has_next_page: bool


@strawberry.type
class Edge(Generic[Node]):
    node: Node


@strawberry.type
class Connection(Generic[Node]):
    edges: list[Edge[Node]]
    page_info: PageInfo


def connection(nodes: Sequence[Node], has_next_page: bool) -> Connection[Node]:
    return Connection(
        edges=[Edge(node=node) for node in nodes], page_info=PageInfo(has_next_page=has_next_page)
    )


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
class Order:
    id: strawberry.ID
    status: OrderStatus
    total_cents: int
    currency: str
    created_at: datetime
    version: int
    items: list[OrderItem]


@strawberry.type
class Group:
    id: strawberry.ID
    name: str
    created_at: datetime


class Loaders:
    """One request's DataLoaders, over one tenant's partitions."""

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.users = DataLoader[str, UserItem | None](load_fn=self._users)
        self.groups = DataLoader[str, GroupItem | None](load_fn=self._groups)
        self.orders = DataLoader[tuple[str, int], list[UserOrderItem]](load_fn=self._orders)

    async def _users(self, ids: list[str]) -> list[UserItem | None]:
        keys = [(f"T#{self.tenant}#USER#{uid}", "PROFILE") for uid in ids]
        found = {item.user_id: item for item in await _batch_get(UserItem, keys)}
        return [found.get(uid) for uid in ids]

    async def _groups(self, ids: list[str]) -> list[GroupItem | None]:
        keys = [(f"T#{self.tenant}#GROUP#{gid}", "GROUP") for gid in ids]
        found = {item.group_id: item for item in await _batch_get(GroupItem, keys)}
        return [found.get(gid) for gid in ids]

    async def _orders(self, keys: list[tuple[str, int]]) -> list[list[UserOrderItem]]:
        """A user's newest `limit` orders, one Query per user."""
        return list(
            await asyncio.gather(
                *(asyncio.to_thread(self._user_orders, uid, limit) for uid, limit in keys)
            )
        )

    def _user_orders(self, user_id: str, limit: int) -> list[UserOrderItem]:
        return list(
            UserOrderItem.query(
                f"T#{self.tenant}#USER#{user_id}",
                UserOrderItem.SK.startswith("ORDER#"),
                scan_index_forward=False,
                limit=limit,
            )
        )


async def _batch_get(model: type[Keyed], keys: Iterable[tuple[str, str]]) -> list[Keyed]:
    return await asyncio.to_thread(lambda: list(model.batch_get(list(keys))))


PeerInfo = strawberry.Info[Loaders, None]


def _order(item: UserOrderItem) -> Order:
    return Order(
        id=global_id("Order", item.order_id),
        status=OrderStatus(item.status),
        total_cents=int(item.total_cents),
        currency=item.currency,
        created_at=datetime.fromisoformat(item.created_at),
        version=int(item.version),
        items=[
            OrderItem(
                sku=line.sku,
                name=line.name,
                quantity=int(line.quantity),
                unit_price_cents=int(line.unit_price_cents),
            )
            for line in item.items
        ],
    )


def _group(item: GroupItem) -> Group:
    return Group(
        id=global_id("Group", item.group_id),
        name=item.name,
        created_at=datetime.fromisoformat(item.created_at),
    )


@strawberry.type
class User:
    id: strawberry.ID
    email: str
    name: str
    created_at: datetime
    version: int
    item: strawberry.Private[UserItem]

    @classmethod
    def of(cls, item: UserItem) -> User:
        return cls(
            id=global_id("User", item.user_id),
            email=item.email,
            name=item.name,
            created_at=datetime.fromisoformat(item.created_at),
            version=int(item.version),
            item=item,
        )

    @strawberry.field
    async def orders(self, info: PeerInfo, first: int = DEFAULT_PAGE) -> Connection[Order]:
        found = await info.context.orders.load((self.item.user_id, first + 1))
        return connection([_order(item) for item in found[:first]], len(found) > first)

    @strawberry.field
    async def groups(self, info: PeerInfo, first: int = DEFAULT_PAGE) -> Connection[Group]:
        """The user's groups, by the ids the user item keeps, in one BatchGetItem a batch."""
        ids = list(self.item.group_ids or ())
        found = await info.context.groups.load_many(ids[:first])
        return connection([_group(item) for item in found if item is not None], len(ids) > first)


def _users_page(tenant: str, limit: int) -> list[UserItem]:
    return list(UserItem.by_creation.query(f"T#{tenant}#USERS", limit=limit))


@strawberry.type
class Query:
    @strawberry.field
    async def user(self, info: PeerInfo, id: strawberry.ID) -> User | None:
        user_id = local_id(id, "User")
        found = await info.context.users.load(user_id) if user_id is not None else None
        return User.of(found) if found is not None else None

    @strawberry.field
    async def users(self, info: PeerInfo, first: int = DEFAULT_PAGE) -> Connection[User]:
        found = await asyncio.to_thread(_users_page, info.context.tenant, first + 1)
        return connection([User.of(item) for item in found[:first]], len(found) > first)


SCHEMA = strawberry.Schema(
    query=Query,
    extensions=[lambda: ParserCache(maxsize=512), lambda: ValidationCache(maxsize=512)],
)
"""Parsed and validated documents are cached, as Strawberry offers."""


class PeerGraphQL(GraphQL[Loaders, None]):
    """Strawberry's ASGI view, fresh DataLoaders for every request."""

    def __init__(self, tenant: str) -> None:
        super().__init__(SCHEMA, graphql_ide=None)
        self._tenant = tenant

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Loaders:
        return Loaders(self._tenant)

"""Shops: a name at a position, found by id or by distance from a point (S1)."""

from __future__ import annotations

from collections.abc import Sequence

import strawberry

from generated import authz
from generated.models.shop import Shop as ShopRecord
from generated.queries.shop import get_shops
from server.authz import require
from server.graphql.context import Context
from server.graphql.ids import to_global_id
from server.graphql.types.node import Node, register_node

TYPE_NAME = "Shop"


@strawberry.type(name="Shop", description="A shop and where it is.")
class Shop(Node):
    name: str
    lat: float
    lng: float
    version: int = strawberry.field(
        description="Increases with every change; pass it back as expectedVersion to change it."
    )

    @classmethod
    def from_record(cls, record: ShopRecord) -> Shop:
        return cls(
            id=to_global_id(TYPE_NAME, record.shop_id),
            name=record.name,
            lat=record.lat,
            lng=record.lng,
            version=record.version,
        )


@strawberry.type(description="A shop and its great-circle distance from the point asked about.")
class ShopDistance:
    shop: Shop
    distance_km: float


async def load_shop(ctx: Context, shop_id: str) -> Shop | None:
    """A shop by its local id, through the request's batched loader (BatchGetItem)."""
    require(authz.may_run_get_shops(ctx.caller), "read shops")

    async def load(ids: Sequence[str]) -> list[ShopRecord | None]:
        return await get_shops(ctx.session, ctx.tenant, ids)

    record = await ctx.loader("shops", load).load(shop_id)
    return None if record is None else Shop.from_record(record)


register_node(TYPE_NAME, load_shop)

"""Root fields for shops: one by id, the ones near a point, and creating one."""

from __future__ import annotations

import strawberry

from generated import authz
from server.authz import require
from server.domain import shops
from server.graphql.context import Info
from server.graphql.types.node import lookup_id
from server.graphql.types.payloads import DeleteInput, DeletePayload, delete, local_id_of
from server.graphql.types.shop import TYPE_NAME, Shop, ShopDistance, load_shop


@strawberry.input(description="A new shop: its name and position in degrees.")
class CreateShopInput:
    name: str
    lat: float
    lng: float


@strawberry.input(description="A shop's new position, checked against the version last read.")
class MoveShopInput:
    id: strawberry.ID
    expected_version: int
    lat: float
    lng: float


@strawberry.type
class ShopQuery:
    @strawberry.field(description="A shop by id.")
    async def shop(self, info: Info, id: strawberry.ID) -> Shop | None:
        shop_id = lookup_id(id, TYPE_NAME)
        return None if shop_id is None else await load_shop(info.context, shop_id)

    @strawberry.field(
        description=(
            "Shops within radiusKm (0 < radiusKm <= 50) of a point by great-circle distance, "
            "nearest first; first defaults to 20, at most 100. Null with FORBIDDEN for a "
            "caller who may not read shops."
        )
    )
    async def shops_near(
        self, info: Info, lat: float, lng: float, radius_km: float, first: int | None = None
    ) -> list[ShopDistance] | None:
        ctx = info.context
        require(authz.may_run_shops_in_cell(ctx.caller), "read shops")
        limit = shops.check_query(lat, lng, radius_km, first)
        near = await shops.shops_near(ctx.session, ctx.tenant, lat, lng, radius_km, limit)
        return [
            ShopDistance(shop=Shop.from_record(record), distance_km=distance)
            for distance, record in near
        ]


@strawberry.type
class ShopMutation:
    @strawberry.mutation(description="Create a shop at a position.")
    async def create_shop(self, info: Info, input: CreateShopInput) -> Shop:
        ctx = info.context
        require(authz.may_create_shop(ctx.caller), "create shops")
        record = await shops.create_shop(
            ctx.server_session, ctx.tenant, input.name, input.lat, input.lng
        )
        return Shop.from_record(record)

    @strawberry.mutation(
        description="Move a shop to a new position; a stale expectedVersion is a CONFLICT."
    )
    async def move_shop(self, info: Info, input: MoveShopInput) -> Shop:
        ctx = info.context
        shop_id = local_id_of(input.id, TYPE_NAME)
        require(authz.may_update_shop(ctx.caller), "move shops")
        record = await shops.move_shop(
            ctx.server_session, ctx.tenant, shop_id, input.expected_version, input.lat, input.lng
        )
        return Shop.from_record(record)

    @strawberry.mutation(description="Delete a shop; a stale expectedVersion is a CONFLICT.")
    async def delete_shop(self, info: Info, input: DeleteInput) -> DeletePayload:
        return await delete(
            info, input, TYPE_NAME, authz.may_delete_shop, "delete shops", shops.delete_shop
        )

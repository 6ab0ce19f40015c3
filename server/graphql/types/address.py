"""The Address type: a postal address of a user, found by id or through its user."""

from __future__ import annotations

from datetime import datetime

import strawberry

from generated import authz
from generated.models.address import Address as AddressModel
from server.authz import require
from server.domain.addresses import user_and_addresses
from server.graphql.context import Context
from server.graphql.ids import to_global_id
from server.graphql.types.node import Node, register_node

TYPE_NAME = "Address"
SEPARATOR = "."


def address_local_id(user_id: str, address_id: str) -> str:
    """An address's local id: its user's id and its own (ids never hold a ".")."""
    return f"{user_id}{SEPARATOR}{address_id}"


def parse_local_id(local: str) -> tuple[str, str] | None:
    user_id, dot, address_id = local.partition(SEPARATOR)
    return (user_id, address_id) if dot and user_id and address_id else None


@strawberry.type(name="Address", description="A postal address of a user.")
class Address(Node):
    label: str = strawberry.field(description='What the user calls it, e.g. "Home".')
    line1: str
    line2: str | None
    city: str
    postal_code: str
    country: str = strawberry.field(description="ISO 3166-1 alpha-2 code, e.g. DE.")
    created_at: datetime
    version: int = strawberry.field(
        description="Increases with every change; pass it back as expectedVersion to change it."
    )
    is_default: bool = strawberry.field(description="Whether it is its user's default address.")

    @classmethod
    def from_model(cls, model: AddressModel, default_id: str | None) -> Address:
        return cls(
            id=to_global_id(TYPE_NAME, address_local_id(model.user_id, model.address_id)),
            label=model.label,
            line1=model.line1,
            line2=model.line2,
            city=model.city,
            postal_code=model.postal_code,
            country=model.country,
            created_at=model.created_at,
            version=model.version,
            is_default=model.address_id == default_id,
        )


async def load_address(ctx: Context, local: str) -> Address | None:
    """An address by local id, with its user (for isDefault), from one Query."""
    ids = parse_local_id(local)
    if ids is None:
        return None
    allowed = authz.may_run_user_with_addresses(ctx.caller, user_id=ids[0])
    require(allowed, "read this user's addresses")
    user, addresses = await user_and_addresses(ctx.session, ctx.tenant, ids[0])
    found = next((a for a in addresses if a.address_id == ids[1]), None)
    if user is None or found is None:
        return None
    return Address.from_model(found, user.default_address_id)


register_node(TYPE_NAME, load_address)

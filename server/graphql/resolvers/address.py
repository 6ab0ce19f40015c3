"""Mutations of a user's addresses: add, update, remove; one of them is the default."""

from __future__ import annotations

from typing import Any

import strawberry

from generated import authz
from generated.models.address import Address as AddressModel
from generated.models.user import User as UserModel
from server.authz import require
from server.domain import addresses
from server.errors import BadUserInput, NotFound
from server.graphql.context import Info
from server.graphql.types.address import TYPE_NAME, Address, parse_local_id
from server.graphql.types.payloads import local_id_of
from server.graphql.types.user import User


@strawberry.input(description="A new address of a user.")
class AddAddressInput:
    user_id: strawberry.ID
    label: str
    line1: str
    city: str
    postal_code: str
    country: str = strawberry.field(description="ISO 3166-1 alpha-2 code, e.g. DE.")
    line2: str | None = None
    make_default: bool = strawberry.field(
        default=False, description="Make it the default; a user's first address always is."
    )


@strawberry.input(
    description="Changes to an address, checked against the version last read; fields left "
    "out stay as they are, and line2: null removes the second line."
)
class UpdateAddressInput:
    id: strawberry.ID
    expected_version: int
    label: str | None = strawberry.UNSET
    line1: str | None = strawberry.UNSET
    line2: str | None = strawberry.UNSET
    city: str | None = strawberry.UNSET
    postal_code: str | None = strawberry.UNSET
    country: str | None = strawberry.UNSET
    make_default: bool = False


@strawberry.input(description="An address to remove, checked against the version last read.")
class RemoveAddressInput:
    id: strawberry.ID
    expected_version: int


@strawberry.type(description="An address after a change, and its user.")
class AddressPayload:
    address: Address
    user: User = strawberry.field(description="The user, whose version the change raised.")


@strawberry.type(description="What removeAddress removed, and the user after it.")
class RemoveAddressPayload:
    deleted_id: strawberry.ID
    user: User


def _ids(global_id: str) -> tuple[str, str]:
    ids = parse_local_id(local_id_of(global_id, TYPE_NAME))
    if ids is None:
        raise NotFound(f"no {TYPE_NAME} with id {global_id!r}")
    return ids


def _changes(input: UpdateAddressInput) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for name in addresses.FIELDS:
        value = getattr(input, name)
        if value is strawberry.UNSET:
            continue
        if value is None and name != "line2":
            raise BadUserInput(f"{name} cannot be null", field=name)
        changes[name] = value
    return changes


def _payload(info: Info, address: AddressModel, user: UserModel) -> AddressPayload:
    return AddressPayload(
        address=Address.from_model(address, user.default_address_id),
        user=User.from_model(user, info.context.caller),
    )


@strawberry.type
class AddressMutation:
    @strawberry.mutation(description="Add an address to a user (at most 20).")
    async def add_address(self, info: Info, input: AddAddressInput) -> AddressPayload:
        ctx = info.context
        user_id = local_id_of(input.user_id, "User")
        require(authz.may_create_address(ctx.caller, user_id=user_id), "add this user's addresses")
        fields = {name: getattr(input, name) for name in addresses.FIELDS}
        address, user = await addresses.add_address(
            ctx.server_session, ctx.tenant, user_id, fields, input.make_default
        )
        return _payload(info, address, user)

    @strawberry.mutation(
        description="Change an address or make it the default; a stale version is a CONFLICT."
    )
    async def update_address(self, info: Info, input: UpdateAddressInput) -> AddressPayload:
        ctx = info.context
        user_id, address_id = _ids(input.id)
        allowed = authz.may_update_address(ctx.caller, user_id=user_id)
        require(allowed, "change this user's addresses")
        address, user = await addresses.update_address(
            ctx.server_session,
            ctx.tenant,
            user_id,
            address_id,
            input.expected_version,
            _changes(input),
            input.make_default,
        )
        return _payload(info, address, user)

    @strawberry.mutation(
        description="Remove an address; removing the default leaves the user without one."
    )
    async def remove_address(self, info: Info, input: RemoveAddressInput) -> RemoveAddressPayload:
        ctx = info.context
        user_id, address_id = _ids(input.id)
        allowed = authz.may_delete_address(ctx.caller, user_id=user_id)
        require(allowed, "remove this user's addresses")
        user = await addresses.remove_address(
            ctx.server_session, ctx.tenant, user_id, address_id, input.expected_version
        )
        user_node = User.from_model(user, ctx.caller)
        return RemoveAddressPayload(deleted_id=input.id, user=user_node)

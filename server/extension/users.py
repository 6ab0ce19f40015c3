"""schema.graphql's mutations of users and their addresses, on the spec's API: a user's
email is a claim its writes keep (server/domain/users.py), an address raises its user's
version and may become its default (server/domain/addresses.py)."""

from __future__ import annotations

from typing import Any

from generated import authz
from keygraph import errors
from keygraph.api import Extension
from keygraph.caller import Caller
from server.domain import addresses, users

from .ids import key_of, local_of
from .refusals import as_api_errors
from .writing import by_id, deleted, writer

EXTENSION = Extension('''
"""A new user; the email must be unused in the tenant."""
input CreateUserInput {
  email: String!
  name: String!
}

"""Changes to a user, checked against the version last read."""
input UpdateUserInput {
  id: ID!
  expectedVersion: Int!
  name: String = null
  email: String = null
}

"""A new address of a user."""
input AddAddressInput {
  userId: ID!
  label: String!
  line1: String!
  city: String!
  postalCode: String!
  """ISO 3166-1 alpha-2 code, e.g. DE."""
  country: String!
  line2: String = null
  """Make it the default; a user's first address always is."""
  makeDefault: Boolean! = false
}

"""
Changes to an address, checked against the version last read; fields left out stay as they
are, and line2: null removes the second line.
"""
input UpdateAddressInput {
  id: ID!
  expectedVersion: Int!
  label: String
  line1: String
  line2: String
  city: String
  postalCode: String
  country: String
  makeDefault: Boolean! = false
}

"""An address to remove, checked against the version last read."""
input RemoveAddressInput {
  id: ID!
  expectedVersion: Int!
}

"""An address after a change, and its user."""
type AddressPayload {
  address: Address!
  """The user, whose version the change raised."""
  user: User!
}

"""What removeAddress removed, and the user after it."""
type RemoveAddressPayload {
  deletedId: ID!
  user: User!
}

extend type Mutation {
  """Create a user; the email must be unused in the tenant."""
  createUser(input: CreateUserInput!): User!
  """Update a user; a stale expectedVersion is a CONFLICT."""
  updateUser(input: UpdateUserInput!): User!
  """
  Delete a user: its email is free at once; its addresses, memberships and orders go with
  it.
  """
  deleteUser(input: DeleteInput!): DeletePayload!
  """Add an address to a user (at most 20)."""
  addAddress(input: AddAddressInput!): AddressPayload!
  """Change an address or make it the default; a stale version is a CONFLICT."""
  updateAddress(input: UpdateAddressInput!): AddressPayload!
  """Remove an address; removing the default leaves the user without one."""
  removeAddress(input: RemoveAddressInput!): RemoveAddressPayload!
}
''')


@EXTENSION.field("Mutation.createUser", guard=authz.may_create_user)
async def create_user(_parent: Any, info: Any, input: dict[str, Any]) -> Any:
    with as_api_errors():
        return await users.create_user(
            writer(info), info.context.tenant, input["email"], input["name"]
        )


@EXTENSION.field("Mutation.updateUser", guard=by_id("User", authz.may_update_user, "user_id"))
async def update_user(_parent: Any, info: Any, input: dict[str, Any]) -> Any:
    user_id = local_of(input["id"], "User")
    with as_api_errors():
        return await users.update_user(
            writer(info),
            info.context.tenant,
            user_id,
            input["expected_version"],
            name=input["name"],
            email=input["email"],
        )


@EXTENSION.field("Mutation.deleteUser", guard=by_id("User", authz.may_delete_user, "user_id"))
async def delete_user(_parent: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:
    return await deleted(info, input, "User", users.delete_user)


def _address_key(global_id: str) -> tuple[str, str]:
    """A user's id and an address's, from an Address's global id."""
    parts = key_of(global_id, "Address")
    if len(parts) != 2 or not all(isinstance(part, str) for part in parts):
        raise errors.NotFound(f"no Address with id {global_id!r}")
    return parts[0], parts[1]


def _may_change_address(name: str) -> Any:
    """The guard of an address's update or delete: its user's rule."""
    may = getattr(authz, f"may_{name}_address")

    def guard(caller: Caller, input: dict[str, Any]) -> bool:
        user_id, _ = _address_key(input["id"])
        return bool(may(caller, user_id=user_id))

    return guard


def _changes(input: dict[str, Any]) -> dict[str, Any]:
    """The fields an update gives; null only for line2, which it removes."""
    changes = {name: input[name] for name in addresses.FIELDS if name in input}
    for name, value in changes.items():
        if value is None and name != "line2":
            raise errors.BadArgument(f"{name} cannot be null")
    return changes


@EXTENSION.field(
    "Mutation.addAddress", guard=by_id("User", authz.may_create_address, "user_id", at="user_id")
)
async def add_address(_parent: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:
    user_id = local_of(input["user_id"], "User")
    fields = {name: input[name] for name in addresses.FIELDS}
    with as_api_errors():
        address, user = await addresses.add_address(
            writer(info), info.context.tenant, user_id, fields, input["make_default"]
        )
    return {"address": address, "user": user}


@EXTENSION.field("Mutation.updateAddress", guard=_may_change_address("update"))
async def update_address(_parent: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:
    user_id, address_id = _address_key(input["id"])
    with as_api_errors():
        address, user = await addresses.update_address(
            writer(info),
            info.context.tenant,
            user_id,
            address_id,
            input["expected_version"],
            _changes(input),
            input["make_default"],
        )
    return {"address": address, "user": user}


@EXTENSION.field("Mutation.removeAddress", guard=_may_change_address("delete"))
async def remove_address(_parent: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:
    user_id, address_id = _address_key(input["id"])
    with as_api_errors():
        user = await addresses.remove_address(
            writer(info), info.context.tenant, user_id, address_id, input["expected_version"]
        )
    return {"deleted_id": input["id"], "user": user}

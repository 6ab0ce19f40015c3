"""A user's addresses: items below the user's profile in its partition, so the user and its
addresses are one Query. Adding or removing one, or changing which is the default, also
raises the user's version in the same transaction: the count and the default never race."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from generated.keys import address as address_keys
from generated.keys import user as user_keys
from generated.models.address import Address
from generated.models.user import User
from generated.queries.address import get_address
from generated.queries.user import get_user, plan_user_with_addresses
from keygraph.ids import new_id
from keygraph.plan import Delete, Put, Update, WriteAction
from keygraph.store import Session
from server.domain.collection import first_page
from server.domain.tx import ABSENT, stale, transact, version_is
from server.errors import BadUserInput, NotFound

MAX_ADDRESSES = 20
"""The most addresses a user has: the user and all of them are one page of one Query."""
FIELDS = ("label", "line1", "line2", "city", "postal_code", "country")


async def user_and_addresses(
    s: Session, tenant: str, user_id: str
) -> tuple[User | None, list[Address]]:
    """A user and its addresses (oldest first), from one strongly consistent Query."""
    plan = plan_user_with_addresses(tenant, user_id, limit=MAX_ADDRESSES + 1)
    user: User | None = None
    addresses: list[Address] = []
    for item in await first_page(s, plan, MAX_ADDRESSES + 1):
        if item.get("_type") == User.TYPE:
            user = User.from_item(item)
        elif item.get("_type") == Address.TYPE:
            addresses.append(Address.from_item(item))
    return user, addresses


def _bump_user(tenant: str, user: User, *, default: str | bool | None = False) -> Update:
    """Raise the user's version (conditional on the one read); `default` an address id to
    make it the default, None to clear it, False to leave it."""
    set_: dict[str, Any] = {}
    remove: tuple[str, ...] = ()
    if default is None:
        remove = ("default_address_id",)
    elif default is not False:
        set_["default_address_id"] = default
    return Update(
        key=user_keys.key(tenant, user.user_id),
        set=set_,
        remove=remove,
        add={"version": 1},
        conditions=version_is(user.version),
    )


async def add_address(
    s: Session, tenant: str, user_id: str, fields: Mapping[str, Any], make_default: bool
) -> tuple[Address, User]:
    """A new address of a user; the user's first address is its default."""
    user, addresses = await user_and_addresses(s, tenant, user_id)
    if user is None:
        raise NotFound("no such user")
    if len(addresses) >= MAX_ADDRESSES:
        raise BadUserInput(f"a user has at most {MAX_ADDRESSES} addresses")
    address = Address.model_validate(
        {
            **fields,
            "user_id": user_id,
            "address_id": new_id(),
            "created_at": datetime.now(UTC),
            "version": 1,
        }
    )
    is_default = make_default or user.default_address_id is None
    actions: list[WriteAction] = [
        Put(address.to_item(tenant), conditions=ABSENT),
        _bump_user(tenant, user, default=address.address_id if is_default else False),
    ]
    await transact(s.store, actions, {1: stale("user", user.version + 1, user.version)})
    return address, _after(user, address.address_id if is_default else user.default_address_id)


def _after(user: User, default: str | None) -> User:
    return user.model_copy(update={"version": user.version + 1, "default_address_id": default})


async def update_address(
    s: Session,
    tenant: str,
    user_id: str,
    address_id: str,
    expected_version: int,
    changes: Mapping[str, Any],
    make_default: bool,
) -> tuple[Address, User]:
    """Change an address's fields (a None value removes line2) or make it the default."""
    user, addresses = await user_and_addresses(s, tenant, user_id)
    current = next((a for a in addresses if a.address_id == address_id), None)
    if user is None or current is None:
        raise NotFound("no such address")
    if current.version != expected_version:
        raise stale("address", current.version, expected_version)
    unknown = set(changes) - set(FIELDS)
    if unknown:
        raise BadUserInput(f"unknown address fields: {', '.join(sorted(unknown))}")
    if not changes and not make_default:
        raise BadUserInput("nothing to update: give a field to change or makeDefault")
    updated = Address.model_validate(
        {**current.model_dump(), **changes, "version": current.version + 1}
    )
    conflict = stale("address", current.version + 1, expected_version)
    actions: list[WriteAction] = [
        Put(updated.to_item(tenant), conditions=version_is(expected_version))
    ]
    failures = {0: conflict}
    if make_default and user.default_address_id != address_id:
        actions.append(_bump_user(tenant, user, default=address_id))
        failures[1] = stale("user", user.version + 1, user.version)
        user = _after(user, address_id)
    await transact(s.store, actions, failures)
    return updated, user


async def remove_address(
    s: Session, tenant: str, user_id: str, address_id: str, expected_version: int
) -> User:
    """Remove an address; removing the default leaves the user with none."""
    current = await get_address(s, tenant, user_id, address_id, consistent=True)
    user = None if current is None else await get_user(s, tenant, user_id, consistent=True)
    if user is None or current is None:
        raise NotFound("no such address")
    if current.version != expected_version:
        raise stale("address", current.version, expected_version)
    was_default = user.default_address_id == address_id
    actions: list[WriteAction] = [
        Delete(address_keys.key(tenant, user_id, address_id), version_is(expected_version)),
        _bump_user(tenant, user, default=None if was_default else False),
    ]
    await transact(
        s.store,
        actions,
        {
            0: stale("address", current.version + 1, expected_version),
            1: stale("user", user.version + 1, user.version),
        },
    )
    return _after(user, None if was_default else user.default_address_id)

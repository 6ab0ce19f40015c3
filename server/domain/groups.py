"""Groups and memberships. A membership is one item in the user's partition that GSI1
inverts for the group's side, so both directions are written or removed at once."""

from __future__ import annotations

from datetime import UTC, datetime

from generated.keys import group as group_keys
from generated.keys import membership as membership_keys
from generated.keys import user as user_keys
from generated.models.group import Group
from generated.models.membership import Membership
from keygraph.plan import Check, Delete, Item, Put, WriteAction
from keygraph.store import Session
from server.domain.ids import new_id
from server.domain.tx import ABSENT, PRESENT, transact
from server.errors import Conflict, NotFound


def new_group(name: str, *, group_id: str | None = None, now: datetime | None = None) -> Group:
    return Group(group_id=group_id or new_id(), name=name, created_at=now or datetime.now(UTC))


def new_membership(user_id: str, group_id: str, *, now: datetime | None = None) -> Membership:
    return Membership(user_id=user_id, group_id=group_id, joined_at=now or datetime.now(UTC))


def new_group_items(tenant: str, group: Group) -> list[Item]:
    return [group.to_item(tenant)]


def new_membership_items(tenant: str, membership: Membership) -> list[Item]:
    return [membership.to_item(tenant)]


async def create_group(s: Session, tenant: str, name: str) -> Group:
    group = new_group(name)
    exists = Conflict("a group with this id already exists")
    await transact(s.store, [Put(item=group.to_item(tenant), conditions=ABSENT)], {0: exists})
    return group


def _both_exist(tenant: str, group_id: str, user_id: str) -> list[WriteAction]:
    return [
        Check(key=group_keys.key(tenant, group_id), conditions=PRESENT),
        Check(key=user_keys.key(tenant, user_id), conditions=PRESENT),
    ]


async def add_member(s: Session, tenant: str, group_id: str, user_id: str) -> None:
    """Idempotent: adding a member twice keeps the first membership."""
    membership = new_membership(user_id, group_id)
    actions = [
        *_both_exist(tenant, group_id, user_id),
        Put(item=membership.to_item(tenant), conditions=ABSENT),
    ]
    await transact(
        s.store, actions, {0: NotFound("no such group"), 1: NotFound("no such user"), 2: None}
    )


async def remove_member(s: Session, tenant: str, group_id: str, user_id: str) -> None:
    """Idempotent: removing a non-member changes nothing."""
    actions = [
        *_both_exist(tenant, group_id, user_id),
        Delete(key=membership_keys.key(tenant, user_id, group_id)),
    ]
    await transact(s.store, actions, {0: NotFound("no such group"), 1: NotFound("no such user")})

"""Groups and memberships. A membership is one item in the user's partition that GSI1
inverts for the group's side, so both directions are written or removed at once. Deleting a
group removes it at once and its memberships in a cleanup."""

from __future__ import annotations

from datetime import UTC, datetime

from generated.keys import group as group_keys
from generated.keys import membership as membership_keys
from generated.keys import user as user_keys
from generated.models.cleanup_task import CleanupTask
from generated.models.enums import CleanupTaskKind
from generated.models.group import Group
from generated.models.membership import Membership
from generated.queries.group import get_group
from generated.queries.membership import plan_group_members
from keygraph.plan import Check, Delete, Item, Put, WriteAction
from keygraph.store import Session
from server.domain import cleanup
from server.domain.collection import delete_of, first_page
from server.domain.ids import new_id
from server.domain.tx import (
    ABSENT,
    MAX_ACTIONS,
    PRESENT,
    stale,
    transact,
    version_is,
    write_in_chunks,
)
from server.errors import Conflict, NotFound


def new_group(name: str, *, group_id: str | None = None, now: datetime | None = None) -> Group:
    return Group(
        group_id=group_id or new_id(), name=name, created_at=now or datetime.now(UTC), version=1
    )


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


async def delete_group(s: Session, tenant: str, group_id: str, expected_version: int) -> bool:
    """Delete a group at once; its memberships (both sides are one item) follow in a
    cleanup (True when that is done before this returns)."""
    current = await get_group(s, tenant, group_id, consistent=True)
    if current is None:
        raise NotFound("no such group")
    if current.version != expected_version:
        raise stale("group", current.version, expected_version)
    task = cleanup.new_task(tenant, CleanupTaskKind.GROUP, group_id)
    actions: list[WriteAction] = [
        Delete(key=group_keys.key(tenant, group_id), conditions=version_is(expected_version)),
        cleanup.put_task(task),
    ]
    await transact(s.store, actions, {0: stale("group", current.version + 1, expected_version)})
    return await cleanup.finish(s, task)


async def _clean_group(s: Session, task: CleanupTask) -> bool:
    """A page of a deleted group's memberships. New ones cannot appear (each is written with
    a check that the group exists); the index may still lack one written just before."""
    plan = plan_group_members(task.tenant, task.subject, limit=MAX_ACTIONS)
    memberships = await first_page(s, plan, MAX_ACTIONS)
    await write_in_chunks(s.store, [delete_of(item) for item in memberships])
    return len(memberships) < MAX_ACTIONS and await cleanup.index_settled(s, task)


cleanup.register(CleanupTaskKind.GROUP, _clean_group)

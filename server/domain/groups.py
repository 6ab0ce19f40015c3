"""Groups and memberships. A membership is one item in the user's partition that GSI1
inverts for the group's side, so both directions are written or removed at once. The user
item keeps its group ids too, written in the same transaction (raising the user's version),
so a user's groups need no Query of their own. Deleting a group removes it at once, and its
memberships (and their ids on users) in a cleanup."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from generated.api import API
from generated.keys import group as group_keys
from generated.keys import membership as membership_keys
from generated.keys import user as user_keys
from generated.models.cleanup_task import CleanupTask
from generated.models.enums import CleanupTaskKind
from generated.models.group import Group
from generated.models.membership import Membership
from generated.models.user import User
from generated.queries.group import get_group
from generated.queries.membership import USER_GROUPS_PAGE, plan_group_members, plan_user_groups
from generated.queries.user import get_user, get_users
from keygraph import keycodec, writes
from keygraph.errors import TransactionCanceled
from keygraph.ids import new_id
from keygraph.page import Page
from keygraph.plan import Check, Condition, Delete, Item, Put, Update, WriteAction
from keygraph.store import Session
from server.domain import cleanup
from server.domain.collection import delete_of, first_page
from server.domain.tx import (
    ABSENT,
    MAX_ACTIONS,
    PRESENT,
    stale,
    transact,
    version_is,
)
from server.errors import BadUserInput, Conflict, NotFound

log = logging.getLogger("keygraph.cleanup")

MAX_GROUPS_PER_USER = 100
"""The most groups a user belongs to: the spec's max_items of User.group_ids."""
ATTEMPTS = 8
"""Tries of a membership change whose user changed between its read and its write; each
waits a random while, longer each time, before the next."""
BACKOFF_SECONDS = 0.005


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
    """A new group, as the spec's create writes it (keygraph.writes)."""
    group: Group = await writes.create(s, tenant, API.writes["Group"], {"name": name})
    return group


def in_key_order(group_ids: Iterable[str]) -> list[str]:
    """Group ids in the order of their memberships' sort keys, each once."""
    return sorted(set(group_ids), key=keycodec.escape)


async def group_ids_of(s: Session, tenant: str, user: User) -> list[str]:
    """A user's group ids: kept on its item, or (a user stored before it kept them, see
    `backfill_group_ids`) read from its memberships."""
    if user.group_ids is not None:
        return user.group_ids
    plan = plan_user_groups(tenant, user.user_id, limit=MAX_GROUPS_PER_USER + 1)
    items = await first_page(s, plan, MAX_GROUPS_PER_USER + 1)
    return in_key_order(item["group_id"] for item in items)


def groups_page(
    s: Session, tenant: str, user_id: str, group_ids: Sequence[str], first: int | None
) -> Page[str]:
    """The page of a user's group ids its memberships' Query (user_groups) would give, from
    the ids on the user item: the same page size, `hasNext` and cursors, so a client goes on
    with `after` through that Query."""
    size = USER_GROUPS_PAGE.size(first)
    args = {"user_id": keycodec.escape(user_id)}

    def cursor_at(index: int) -> str:
        key = membership_keys.key(tenant, user_id, group_ids[index])
        return s.cursors.encode(tenant, "user_groups", args, {"k": key})

    return Page(
        list(group_ids[:size]),
        len(group_ids) > size > 0,
        cursor_at,
        lambda: cursor_at(size - 1),
    )


class _UserChanged(Conflict):
    """The user changed between the read and the write of a membership change."""


def _user_groups_set(tenant: str, user: User, group_ids: list[str]) -> Update:
    """The user's new group ids and version, conditional on the version read."""
    return Update(
        key=user_keys.key(tenant, user.user_id),
        set={"group_ids": group_ids},
        add={"version": 1},
        conditions=version_is(user.version),
    )


async def _change_membership(
    s: Session, tenant: str, group_id: str, user_id: str, add: bool
) -> None:
    for attempt in range(ATTEMPTS):
        if attempt:
            await asyncio.sleep(random.uniform(0, BACKOFF_SECONDS * attempt))
        user = await get_user(s, tenant, user_id, consistent=True)
        if user is None:
            raise NotFound("no such user")
        group_ids = await group_ids_of(s, tenant, user)
        group_present = Check(key=group_keys.key(tenant, group_id), conditions=PRESENT)
        no_group = NotFound("no such group")
        if (group_id in group_ids) == add:  # already as asked: only the group is checked
            await transact(s.store, [group_present], {0: no_group})
            return
        if add and len(group_ids) >= MAX_GROUPS_PER_USER:
            raise BadUserInput(f"a user belongs to at most {MAX_GROUPS_PER_USER} groups")
        if add:
            changed = in_key_order([*group_ids, group_id])
            membership: WriteAction = Put(
                item=new_membership(user_id, group_id).to_item(tenant), conditions=ABSENT
            )
        else:
            changed = [other for other in group_ids if other != group_id]
            membership = Delete(key=membership_keys.key(tenant, user_id, group_id))
        actions: list[WriteAction] = [
            group_present,
            _user_groups_set(tenant, user, changed),
            membership,
        ]
        try:
            await transact(s.store, actions, {0: no_group, 1: _UserChanged("the user changed")})
        except _UserChanged:
            continue
        return
    raise Conflict("the user changed while its groups did; try again")


async def add_member(s: Session, tenant: str, group_id: str, user_id: str) -> None:
    """Idempotent: adding a member twice keeps the first membership. A user belongs to at
    most MAX_GROUPS_PER_USER groups."""
    await _change_membership(s, tenant, group_id, user_id, add=True)


async def remove_member(s: Session, tenant: str, group_id: str, user_id: str) -> None:
    """Idempotent: removing a non-member changes nothing."""
    await _change_membership(s, tenant, group_id, user_id, add=False)


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
    """A page of a deleted group's memberships, each with the group's id on its user (in one
    transaction, each user's ids conditional on being those read: a user whose groups changed
    meanwhile cancels it, and the page is read and tried again). New memberships cannot
    appear (each is written with a check that the group exists); the index may still lack
    one written just before."""
    tenant, group_id = task.tenant, task.subject
    page = MAX_ACTIONS // 2
    memberships = await first_page(s, plan_group_members(tenant, group_id, limit=page), page)
    users = await get_users(s, tenant, [item["user_id"] for item in memberships])
    actions: list[WriteAction] = [delete_of(item) for item in memberships]
    for user in users:
        if user is not None and user.group_ids is not None and group_id in user.group_ids:
            left = [other for other in user.group_ids if other != group_id]
            actions.append(
                Update(
                    key=user_keys.key(tenant, user.user_id),
                    set={"group_ids": left},
                    add={"version": 1},
                    conditions=(Condition("equals", "group_ids", user.group_ids),),
                )
            )
    if actions:
        try:
            await s.store.transact_write(actions)
        except TransactionCanceled:
            log.info("cleanup %s met a concurrent change; reading its page again", task.task_id)
            return False
    return len(memberships) < page and await cleanup.index_settled(s, task)


cleanup.register(CleanupTaskKind.GROUP, _clean_group)

"""Users and their email claims: the spec's writes keep an email unique per tenant, its
claim moved with the user (keygraph.writes); deleting a user releases its email at once
and cleans up what it owned."""

from __future__ import annotations

from datetime import UTC, datetime

from generated.api import API
from generated.keys import email_claim as email_claim_keys
from generated.keys import order as order_keys
from generated.keys import user as user_keys
from generated.models.cleanup_task import CleanupTask
from generated.models.enums import CleanupTaskKind
from generated.models.user import User
from generated.queries.membership import plan_user_groups
from generated.queries.user import get_user, plan_user_with_addresses
from generated.queries.user_order import plan_user_orders
from keygraph import writes
from keygraph.ids import new_id
from keygraph.plan import Condition, Delete, Item, WriteAction
from keygraph.store import Session
from keygraph.writes.folds import casefolded
from server.domain import cleanup
from server.domain.collection import delete_of, first_page
from server.domain.emails import email_key, held_key
from server.domain.tx import MAX_ACTIONS, stale, transact, version_is, write_in_chunks
from server.errors import BadUserInput, NotFound

WRITES = API.writes["User"]


def new_user(
    email: str, name: str, *, user_id: str | None = None, now: datetime | None = None
) -> User:
    """A new user as a bulk load stores it, with the id and time it is given."""
    return User(
        user_id=user_id or new_id(),
        email=email,
        name=name,
        created_at=now or datetime.now(UTC),
        version=1,
        group_ids=[],
    )


def new_user_items(tenant: str, user: User) -> list[Item]:
    """The user's items: the profile and its email claim."""
    return writes.items_of(tenant, WRITES, user)


async def create_user(s: Session, tenant: str, email: str, name: str) -> User:
    """A new user with its email's claim; BAD_USER_INPUT when the email is too long to
    claim once folded (emails.email_key), CONFLICT when it is in use."""
    email_key(email)
    values = {"email": email, "name": name, "group_ids": []}
    user: User = await writes.create(s, tenant, WRITES, values)
    return user


async def update_user(
    s: Session,
    tenant: str,
    user_id: str,
    expected_version: int,
    *,
    name: str | None = None,
    email: str | None = None,
) -> User:
    """Changes the user's name or email against the version read; a new email's claim
    replaces the one the user holds (a claim made before claims were folded included)."""
    if name is None and email is None:
        raise BadUserInput("nothing to update: give a name, an email or both")
    changes = {"name": name} if name is not None else {}
    if email is not None:
        email_key(email)
        changes["email"] = email

    async def held(current: User) -> dict[str, dict[str, str]]:
        key = await held_key(s, tenant, current)
        return {} if key == casefolded(current.email) else {"email": {"email_key": key}}

    key = {"user_id": user_id}
    moved = held if email is not None else None  # a claim moves only with a new email
    user: User = await writes.update(s, tenant, WRITES, key, changes, expected_version, moved)
    return user


async def delete_user(s: Session, tenant: str, user_id: str, expected_version: int) -> bool:
    """Delete a user and release its email at once; its addresses, memberships and orders
    follow in a cleanup (True when that is done before this returns)."""
    current = await get_user(s, tenant, user_id, consistent=True)
    if current is None:
        raise NotFound("no such user")
    if current.version != expected_version:
        raise stale("user", current.version, expected_version)
    held = await held_key(s, tenant, current)
    task = cleanup.new_task(tenant, CleanupTaskKind.USER, user_id)
    owned = (Condition(op="equals", attribute="user_id", value=user_id),)
    actions: list[WriteAction] = [
        Delete(key=user_keys.key(tenant, user_id), conditions=version_is(expected_version)),
        Delete(key=email_claim_keys.key(tenant, held), conditions=owned),
        cleanup.put_task(task),
    ]
    conflict = stale("user", current.version + 1, expected_version)
    await transact(s.store, actions, {0: conflict, 1: conflict})
    return await cleanup.finish(s, task)


async def _clean_user(s: Session, task: CleanupTask) -> bool:
    """A page of what a deleted user leaves: its orders (both copies) first, as they can
    still be read by id, then its memberships (both sides are one item) and addresses. New
    ones cannot appear: each is written with a check that the user exists."""
    tenant, user_id = task.tenant, task.subject
    page = MAX_ACTIONS // 2
    orders = await first_page(s, plan_user_orders(tenant, user_id, limit=page), page)
    actions = [Delete(order_keys.key(tenant, item["order_id"])) for item in orders]
    await write_in_chunks(s.store, [*actions, *map(delete_of, orders)])
    if len(orders) == page:
        return False
    memberships = await first_page(s, plan_user_groups(tenant, user_id, limit=page), page)
    profile = await first_page(s, plan_user_with_addresses(tenant, user_id, limit=page), page)
    await write_in_chunks(s.store, [delete_of(item) for item in (*memberships, *profile)])
    return len(memberships) < page and len(profile) < page


cleanup.register(CleanupTaskKind.USER, _clean_user)

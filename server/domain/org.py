"""Org trees: nodes addressed by their path of ids from the root (T1-T3), creating one, and
the counts that cap a node's children and a tenant's roots.

A node's key holds its whole path, so the node, its parent and its ancestors are all known
keys, and its subtree is one begins_with on the path. Each node keeps the count of its
children, and the tenant's `OrgRoots` item the count of its roots: every transaction that
adds or removes a child changes its parent's count, on the condition that it stays below
the cap, so racing writes cannot pass it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from generated.keys.org_node import key as org_node_key
from generated.keys.org_roots import key as org_roots_key
from generated.models.org_node import OrgNode as OrgNodeRecord
from generated.models.org_roots import OrgRoots
from generated.queries.org_node import get_org_node, org_children
from generated.queries.org_roots import get_org_roots
from generated.table import TABLE
from keygraph.errors import ConditionFailed, TransactionCanceled
from keygraph.ids import new_id
from keygraph.plan import Check, Condition, Key, Put, Update, WriteAction
from keygraph.store import Session
from server.domain.tx import ABSENT, CONDITION_FAILED
from server.errors import ApiError, BadUserInput, Conflict, NotFound

ROOT_REF = "ROOT"
"""The parent_ref of a root: roots are the children of ROOT in GSI1."""
MAX_LEVELS = 32
"""A node's sort key is NODE# and 27 bytes a level; DynamoDB caps sort keys at 1024 bytes."""
MAX_CHILDREN = 100
"""The most children a node has, and the most roots a tenant has: `createOrgNode` and
`moveOrgNode` refuse more, and a node's children are read as one page of this size."""
COUNT = "child_count"
"""The attribute holding a parent's count of children (a node's, or the tenant's roots)."""
ATTEMPTS = 8
"""Tries of a write that lost a race for a parent's count, each after a random wait that
grows with each try."""
BACKOFF_SECONDS = 0.01

Path = tuple[str, ...]


def org_node_record(
    node_id: str,
    name: str,
    parent_path: Sequence[str],
    created_at: datetime,
    child_count: int | None = None,
) -> OrgNodeRecord:
    """A node below parent_path (empty for a root); pydantic checks the fields. A node
    without a count of children is counted when a child is first added or removed."""
    path = (*parent_path, node_id)
    return OrgNodeRecord(
        node_id=node_id,
        path=path,
        parent_ref=parent_path[-1] if parent_path else ROOT_REF,
        name=name,
        depth=len(path) - 1,
        created_at=created_at,
        version=1,
        child_count=child_count,
    )


async def create_org_node(s: Session, tenant: str, name: str, parent_path: Path) -> OrgNodeRecord:
    """A new node under parent_path, or a root when it is empty; NotFound when the parent
    does not exist, BadUserInput when it has MAX_CHILDREN children already."""
    if len(parent_path) >= MAX_LEVELS:
        raise BadUserInput(f"an org tree has at most {MAX_LEVELS} levels")
    record = org_node_record(new_id(), name, parent_path, datetime.now(UTC), child_count=0)
    put = Put(record.to_item(tenant), conditions=ABSENT)
    # The parent's path is in its id: the same transaction that writes the child checks
    # the parent and its ancestors (no read), and raises the parent's version and count.
    missing = NotFound("no such parent org node, or its subtree is moving")
    guards = guard_parent(tenant, parent_path, 1)
    await write_counted(
        s,
        tenant,
        [*guards, put],
        [Counted(parent_path, 1, missing)],
        dict.fromkeys(range(len(guards)), missing),
    )
    return record


STILL = (Condition("exists", TABLE.partition_key), Condition("not_exists", "moving"))
"""A node that exists and is not part of a move under way."""


def counter_key(tenant: str, parent: Path) -> Key:
    """The item that counts the children of `parent`: the node, or for the roots (an empty
    path) the tenant's OrgRoots item."""
    return org_node_key(tenant, parent) if parent else org_roots_key(tenant)


def _counts(change: int) -> tuple[Condition, ...]:
    """The condition of changing a count by `change`: growing keeps it at most MAX_CHILDREN;
    both fail on a parent without a count (one stored before parents kept it)."""
    if change > 0:
        return (Condition("less_than", COUNT, MAX_CHILDREN - change + 1),)
    if change < 0:
        return (Condition("exists", COUNT),)
    return ()


def guard_parent(tenant: str, parent: Path, change: int = 0) -> list[Check | Update]:
    """The actions that make a change below `parent` safe: the parent and every ancestor
    exist and none is moving, the parent's version goes up (its children changed), and its
    count of children by `change` (for the roots, the tenant's count of roots)."""
    if not parent:
        count = Update(org_roots_key(tenant), add={COUNT: change}, conditions=_counts(change))
        return [count] if change else []
    ancestors: list[Check | Update] = [
        Check(org_node_key(tenant, parent[:end]), STILL) for end in range(1, len(parent))
    ]
    add = {"version": 1, **({COUNT: change} if change else {})}
    bump = Update(org_node_key(tenant, parent), add=add, conditions=(*STILL, *_counts(change)))
    return [*ancestors, bump]


@dataclass(frozen=True)
class Counted:
    """A parent whose count of children a transaction changes; `missing` is the error when
    the parent is gone or moving."""

    parent: Path
    change: int
    missing: ApiError


async def write_counted(
    s: Session,
    tenant: str,
    actions: Sequence[WriteAction],
    counted: Sequence[Counted],
    failures: dict[int, ApiError],
) -> None:
    """Write `actions` in one transaction that changes the counts `counted` (their parents'
    updates are among the actions). When the condition of action i fails, raise failures[i]
    (CONFLICT when it has none), the first in order winning; when a count's fails, raise
    BadUserInput if the parent is full, or count a parent that has no count yet, or (the
    count changed meanwhile, or DynamoDB cancelled a transaction that raced another) try
    again, up to ATTEMPTS times."""
    counters = {
        index: change
        for change in counted
        for index, action in enumerate(actions)
        if isinstance(action, Update) and action.key == counter_key(tenant, change.parent)
    }
    for attempt in range(ATTEMPTS):
        if attempt:
            await asyncio.sleep(random.uniform(0, BACKOFF_SECONDS * attempt))
        try:
            await s.store.transact_write(actions)
            return
        except TransactionCanceled as exc:
            failed = [i for i, reason in enumerate(exc.reasons) if reason.code == CONDITION_FAILED]
            if failed and failed[0] not in counters:
                raise failures.get(failed[0]) or Conflict(
                    "a concurrent write got in the way; try again"
                ) from exc
            if failed:
                await _settle(s, tenant, counters[failed[0]])
    raise Conflict("the org tree changed while this was written; try again")


async def _settle(s: Session, tenant: str, change: Counted) -> None:
    """Why a count's condition failed: the parent is gone or moving (its `missing` error),
    full (BadUserInput), or has no count yet (counted here); else it changed meanwhile."""
    count: int | None = None
    if change.parent:
        node = await get_org_node(s, tenant, change.parent, consistent=True)
        if node is None or node.moving is not None:
            raise change.missing
        count = node.child_count
    else:
        roots = await get_org_roots(s, tenant, consistent=True)
        count = None if roots is None else roots.child_count
    if count is None:
        await _count_children(s, tenant, change.parent)
    elif change.change > 0 and count + change.change > MAX_CHILDREN:
        if change.parent:
            raise BadUserInput(f"an org node has at most {MAX_CHILDREN} children")
        raise BadUserInput(f"a tenant has at most {MAX_CHILDREN} roots")


async def _count_children(s: Session, tenant: str, parent: Path) -> None:
    """Give a parent stored before parents kept a count (or a tenant without its OrgRoots
    item) its count, from a Query of its children, unless one was written meanwhile. No
    change below it is written before (each needs the count); DynamoDB's index may still
    lack a child written just before, by a server that kept no counts."""
    ref = parent[-1] if parent else ROOT_REF
    count, after = 0, None
    while True:
        page = await org_children(s, tenant, ref, first=1000, after=after)
        count += len(page.items)
        if not page.has_next:
            break
        after = page.cursor
    try:
        if parent:
            uncounted = (Condition("exists", TABLE.partition_key), Condition("not_exists", COUNT))
            key = org_node_key(tenant, parent)
            await s.store.update(Update(key, set={COUNT: count}, conditions=uncounted))
        else:
            await s.store.put(Put(OrgRoots(child_count=count).to_item(tenant), ABSENT))
    except ConditionFailed:
        pass  # counted meanwhile (or gone: the next try says so)

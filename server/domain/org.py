"""Org trees: nodes addressed by their path of ids from the root (T1-T3), and creating one.

A node's key holds its whole path, so the node, its parent and its ancestors are all known
keys, and its subtree is one begins_with on the path.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from generated.keys.org_node import key as org_node_key
from generated.models.org_node import OrgNode as OrgNodeRecord
from generated.queries.org_node import org_children
from generated.table import TABLE
from keygraph.errors import TransactionCanceled
from keygraph.plan import Check, Condition, Put, Update
from keygraph.store import Session
from server.domain.ids import new_id
from server.errors import BadUserInput, NotFound

ROOT_REF = "ROOT"
"""The parent_ref of a root: roots are the children of ROOT in GSI1."""
MAX_LEVELS = 32
"""A node's sort key is NODE# and 27 bytes a level; DynamoDB caps sort keys at 1024 bytes."""
MAX_CHILDREN = 100
"""The most children a node has, and the most roots a tenant has: `createOrgNode` refuses
more, and a node's children are read as one page of this size."""
CONDITION_FAILED = "ConditionalCheckFailed"

Path = tuple[str, ...]


def org_node_record(
    node_id: str, name: str, parent_path: Sequence[str], created_at: datetime
) -> OrgNodeRecord:
    """A node below parent_path (empty for a root); pydantic checks the fields."""
    path = (*parent_path, node_id)
    return OrgNodeRecord(
        node_id=node_id,
        path=path,
        parent_ref=parent_path[-1] if parent_path else ROOT_REF,
        name=name,
        depth=len(path) - 1,
        created_at=created_at,
        version=1,
    )


async def create_org_node(s: Session, tenant: str, name: str, parent_path: Path) -> OrgNodeRecord:
    """A new node under parent_path, or a root when it is empty; NotFound when the parent
    does not exist."""
    if len(parent_path) >= MAX_LEVELS:
        raise BadUserInput(f"an org tree has at most {MAX_LEVELS} levels")
    siblings = await org_children(
        s, tenant, parent_path[-1] if parent_path else ROOT_REF, first=MAX_CHILDREN
    )
    if len(siblings.items) >= MAX_CHILDREN:
        what = "a node has at most {} children" if parent_path else "a tenant has at most {} roots"
        raise BadUserInput(what.format(MAX_CHILDREN))
    record = org_node_record(new_id(), name, parent_path, datetime.now(UTC))
    put = Put(record.to_item(tenant), conditions=(Condition("not_exists", TABLE.partition_key),))
    if not parent_path:
        await s.store.put(put)
        return record
    # The parent's path is in its id: the same transaction that writes the child checks
    # the parent and its ancestors (no read), and raises the parent's version.
    try:
        await s.store.transact_write([*guard_parent(tenant, parent_path), put])
    except TransactionCanceled as exc:
        if any(reason.code == CONDITION_FAILED for reason in exc.reasons[:-1]):
            raise NotFound("no such parent org node, or its subtree is moving") from exc
        raise
    return record


STILL = (Condition("exists", TABLE.partition_key), Condition("not_exists", "moving"))
"""A node that exists and is not part of a move under way."""


def guard_parent(tenant: str, parent: Path) -> list[Check | Update]:
    """The actions that make a change below `parent` safe: the parent and every ancestor
    exist and none is moving, and the parent's version goes up (its children changed)."""
    ancestors: list[Check | Update] = [
        Check(org_node_key(tenant, parent[:end]), STILL) for end in range(1, len(parent))
    ]
    bump = Update(org_node_key(tenant, parent), add={"version": 1}, conditions=STILL)
    return [*ancestors, bump]

"""Deleting and moving org nodes.

A node's key is its path, so a move rewrites the node and every descendant at new keys. A
delete or move that fits one transaction is one transaction: the tree is correct at every
moment. A larger one marks the subtree's root `moving` and records a cleanup task; while it
runs the subtree refuses writes (creating, deleting or moving a node below a moving node, or
below a node already removed, fails), and readers may see it partly moved. Node ids are
paths: the moved nodes answer to new ids.
"""

from __future__ import annotations

from generated.keys.cleanup_task import key as task_key
from generated.keys.org_node import key as org_node_key
from generated.models.cleanup_task import CleanupTask
from generated.models.enums import CleanupTaskKind
from generated.models.org_node import OrgNode as OrgNodeRecord
from generated.queries.cleanup_task import cleanup_tasks
from generated.queries.org_node import get_org_node, plan_org_subtree
from generated.queries.org_roots import get_org_roots
from keygraph.plan import Check, Condition, Delete, Put, Update, WriteAction
from keygraph.store import Session
from server.domain import cleanup
from server.domain.collection import first_page
from server.domain.org import (
    COUNT,
    MAX_LEVELS,
    ROOT_REF,
    Counted,
    Path,
    counter_key,
    guard_parent,
    write_counted,
)
from server.domain.tx import ABSENT, MAX_ACTIONS, stale, write_in_chunks
from server.errors import BadUserInput, Conflict, NotFound

SEPARATOR = "."
_ORG_KINDS = (CleanupTaskKind.ORG_MOVE, CleanupTaskKind.ORG_SUBTREE)
MOVE_PAGE = MAX_ACTIONS // 2
"""Nodes a large move rewrites per transaction (a delete and a put each)."""


def _unchanged(version: int) -> tuple[Condition, ...]:
    return (Condition("equals", "version", version), Condition("not_exists", "moving"))


async def _current(s: Session, tenant: str, path: Path, expected: int) -> OrgNodeRecord:
    node = await get_org_node(s, tenant, path, consistent=True)
    if node is None:
        raise NotFound("no such org node")
    if node.moving is not None:
        raise Conflict("the org node's subtree is moving; try again when it is done")
    if node.version != expected:
        raise stale("org node", node.version, expected)
    return node


async def _no_work_below(s: Session, tenant: str, path: Path, ours: str | None = None) -> None:
    """CONFLICT when a large delete or move (other than task `ours`) is still at work in the
    subtree of `path`: it would race with this change."""
    joined = SEPARATOR.join(path)
    after: str | None = None
    while True:
        page = await cleanup_tasks(s, first=1000, after=after)
        for task in page.items:
            mine = task.tenant == tenant and task.kind in _ORG_KINDS and task.task_id != ours
            if mine and _touches(task, joined):
                raise Conflict("a move or delete is still at work below this org node")
        if not page.has_next:
            return
        after = page.cursor


def _touches(task: CleanupTask, joined: str) -> bool:
    """Whether a task's subtree (where it is, or where it goes) lies within path `joined`."""
    places = (task.subject, task.destination or "")
    return any(place == joined or place.startswith(joined + SEPARATOR) for place in places)


def _guards(tenant: str, *changes: tuple[Path, int]) -> list[WriteAction]:
    """guard_parent for each parent and change of its count of children, each node once (a
    parent's version goes up; a node that is only an ancestor is checked)."""
    actions: dict[tuple[str, ...], Check | Update] = {}
    for parent, change in changes:
        for action in guard_parent(tenant, parent, change):
            key = tuple(action.key.values())
            if key not in actions or isinstance(action, Update):
                actions[key] = action
    return list(actions.values())


BUSY = Conflict("a concurrent write got in the way; try again")
"""The error when a node's old parent is gone or moving (a change raced this one)."""


async def delete_org_node(
    s: Session, tenant: str, path: Path, expected_version: int, cascade: bool
) -> bool:
    """Delete a leaf, or with `cascade` a subtree; True when nothing is left to clean up."""
    node = await _current(s, tenant, path, expected_version)
    await _no_work_below(s, tenant, path)
    guards = _guards(tenant, (path[:-1], -1))
    leaves = [Counted(path[:-1], -1, BUSY)]
    room = MAX_ACTIONS - 1 - len(guards)
    below = await first_page(s, plan_org_subtree(tenant, path, limit=room + 1), room + 1)
    if below and not cascade:
        raise BadUserInput("the org node has children; pass cascade: true to delete its subtree")
    conflict = stale("org node", node.version + 1, expected_version)
    this = Delete(org_node_key(tenant, path), _unchanged(expected_version))
    if len(below) <= room:
        # One transaction; a child created meanwhile raised its parent's version.
        records = [OrgNodeRecord.from_item(item) for item in below]
        each = [Delete(org_node_key(tenant, r.path), _unchanged(r.version)) for r in records]
        await write_counted(s, tenant, [this, *each, *guards], leaves, {0: conflict})
        return True
    task = cleanup.new_task(tenant, CleanupTaskKind.ORG_SUBTREE, SEPARATOR.join(path))
    task_actions = [this, *guards, cleanup.put_task(task)]
    await write_counted(s, tenant, task_actions, leaves, {0: conflict})
    return await cleanup.finish(s, task)


async def _clean_subtree(s: Session, task: CleanupTask) -> bool:
    """A page of a deleted node's descendants; none can be added below a removed node."""
    plan = plan_org_subtree(task.tenant, _path(task.subject), limit=MAX_ACTIONS)
    below = await first_page(s, plan, MAX_ACTIONS)
    paths = [OrgNodeRecord.from_item(item).path for item in below]
    await write_in_chunks(s.store, [Delete(org_node_key(task.tenant, path)) for path in paths])
    return len(below) < MAX_ACTIONS


def _path(joined: str) -> Path:
    return tuple(joined.split(SEPARATOR)) if joined else ()


def _moved(record: OrgNodeRecord, old: Path, new_parent: Path, **changes: object) -> OrgNodeRecord:
    """`record` (in the subtree of `old`) rewritten below new_parent."""
    path = (*new_parent, *record.path[len(old) - 1 :])
    parent_ref = path[-2] if len(path) > 1 else ROOT_REF
    update = {"path": path, "parent_ref": parent_ref, "depth": len(path) - 1, **changes}
    return record.model_copy(update=update)


async def move_org_node(
    s: Session, tenant: str, path: Path, expected_version: int, new_parent: Path
) -> tuple[OrgNodeRecord, bool]:
    """Re-parent a node and its subtree below new_parent (a root when empty): the node at its
    new path, and whether the move is complete (else it goes on as a cleanup task)."""
    if new_parent == path[:-1]:
        raise BadUserInput("the org node is already there")
    if new_parent[: len(path)] == path:
        raise BadUserInput("an org node cannot move below itself")
    node = await _current(s, tenant, path, expected_version)
    await _no_work_below(s, tenant, path)
    if new_parent and await get_org_node(s, tenant, new_parent, consistent=True) is None:
        raise NotFound("no such new parent org node")
    arrives = Counted(new_parent, 1, NotFound("no such new parent org node"))
    guards = _guards(tenant, (path[:-1], -1), (new_parent, 1))
    room = (MAX_ACTIONS - len(guards)) // 2 - 1
    below = await first_page(s, plan_org_subtree(tenant, path, limit=room + 1), room + 1)
    records = [OrgNodeRecord.from_item(item) for item in below]
    deepest = max([len(record.path) for record in records] + [len(path)])
    if deepest - len(path) + len(new_parent) + 1 > MAX_LEVELS:
        raise BadUserInput(f"an org tree has at most {MAX_LEVELS} levels")
    conflict = stale("org node", node.version + 1, expected_version)
    if len(below) <= room:
        actions: list[WriteAction] = [Delete(org_node_key(tenant, path), _unchanged(node.version))]
        actions.append(Put(_moved(node, path, new_parent).to_item(tenant), ABSENT))
        for record in records:
            actions.append(Delete(org_node_key(tenant, record.path), _unchanged(record.version)))
            actions.append(Put(_moved(record, path, new_parent).to_item(tenant), ABSENT))
        counted = [Counted(path[:-1], -1, BUSY), arrives]
        await write_counted(s, tenant, [*actions, *guards], counted, {0: conflict})
        return _moved(node, path, new_parent), True
    task = cleanup.new_task(
        tenant, CleanupTaskKind.ORG_MOVE, SEPARATOR.join(path), SEPARATOR.join(new_parent)
    )
    lock = Update(
        org_node_key(tenant, path),
        set={"moving": task.task_id},
        conditions=_unchanged(node.version),
    )
    # The new parent counts the node from here; the old one until the node leaves it.
    guards = _guards(tenant, (path[:-1], 0), (new_parent, 1))
    task_actions = [lock, *guards, cleanup.put_task(task)]
    await write_counted(s, tenant, task_actions, [arrives], {0: conflict})
    try:
        # Once locked, no new work can start below; work that started before shows here.
        await _no_work_below(s, tenant, path, ours=task.task_id)
    except Conflict:
        mine = (Condition("equals", "moving", task.task_id),)
        unlock = Update(org_node_key(tenant, path), remove=("moving",), conditions=mine)
        uncount = Update(counter_key(tenant, new_parent), add={COUNT: -1}, conditions=COUNTED)
        await s.store.transact_write([unlock, Delete(task_key(task.task_id)), uncount])
        raise
    done = await cleanup.finish(s, task)
    return _moved(node, path, new_parent, moving=None if done else task.task_id), done


async def _continue_move(s: Session, task: CleanupTask) -> bool:
    """A page of a large move: the locked root first, then its old descendants (path order,
    parents first); at the end the new root is unlocked."""
    tenant, old, new_parent = task.tenant, _path(task.subject), _path(task.destination or "")
    locked = (Condition("equals", "moving", task.task_id),)
    root = await get_org_node(s, tenant, old, consistent=True)
    if root is not None:
        moved = _moved(root, old, new_parent)
        leaves = await _leaving(s, tenant, old[:-1])
        await s.store.transact_write(
            [Delete(org_node_key(tenant, old), locked), Put(moved.to_item(tenant), ABSENT), *leaves]
        )
        return False
    below = await first_page(s, plan_org_subtree(tenant, old, limit=MOVE_PAGE), MOVE_PAGE)
    if below:
        actions: list[WriteAction] = []
        for item in below:
            record = OrgNodeRecord.from_item(item)
            actions.append(Delete(org_node_key(tenant, record.path)))
            actions.append(Put(_moved(record, old, new_parent).to_item(tenant)))
        await s.store.transact_write(actions)
        return False
    new_root = await get_org_node(s, tenant, (*new_parent, old[-1]), consistent=True)
    if new_root is not None and new_root.moving == task.task_id:
        await s.store.update(Update(org_node_key(tenant, new_root.path), remove=("moving",)))
    return True


COUNTED = (Condition("exists", COUNT),)


async def _leaving(s: Session, tenant: str, parent: Path) -> list[Update]:
    """The decrement of the count of `parent` as a large move's root leaves it; none when it
    keeps no count (it is counted from its children when next changed)."""
    if parent:
        node = await get_org_node(s, tenant, parent, consistent=True)
        count = None if node is None else node.child_count
    else:
        roots = await get_org_roots(s, tenant, consistent=True)
        count = None if roots is None else roots.child_count
    if count is None:
        return []
    return [Update(counter_key(tenant, parent), add={COUNT: -1}, conditions=COUNTED)]


cleanup.register(CleanupTaskKind.ORG_SUBTREE, _clean_subtree)
cleanup.register(CleanupTaskKind.ORG_MOVE, _continue_move)

"""Caps that hold under concurrency: an org node's children and a tenant's roots stop at
MAX_CHILDREN however many creates or moves race for the last places, every node stored is
listed, and parents stored before they kept a count are counted when first changed; a
user's groups stop at MAX_GROUPS_PER_USER."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from generated.keys.org_roots import key as roots_key
from keygraph.cursor import CursorCodec
from keygraph.plan import Delete, Get, Update
from keygraph.store import Session
from server.domain import cleanup, org_changes
from server.domain.groups import MAX_GROUPS_PER_USER
from server.domain.org import MAX_CHILDREN
from server.errors import Conflict
from tests.ids import local_id
from tests.server.conftest import Api, World
from tests.server.domain.test_group_ids import stored_ids

CREATE = """mutation($name: String!, $parent: ID) {
  createOrgNode(input: {name: $name, parentId: $parent}) { id version } }"""
MOVE = """mutation($i: MoveOrgNodeInput!) { moveOrgNode(input: $i) { complete node { id } } }"""
DELETE = """mutation($i: DeleteOrgNodeInput!) { deleteOrgNode(input: $i) { complete } }"""
CHILDREN = """query($id: ID!) { orgNode(id: $id) { version children { id } } }"""
ROOTS = "{ orgRoots { id } }"
ADD_MEMBER = "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }"


def codes(body: dict[str, Any]) -> list[str]:
    return [error["extensions"]["code"] for error in body.get("errors") or []]


async def create_many(api: Api, count: int, parent: str | None, prefix: str) -> list[str]:
    """`count` nodes below `parent` (roots when None), created ten at a time."""
    created: list[str] = []
    for start in range(0, count, 10):
        bodies = await asyncio.gather(
            *(
                api(CREATE, {"name": f"{prefix} {n}", "parent": parent})
                for n in range(start, min(count, start + 10))
            )
        )
        for body in bodies:
            assert "errors" not in body, body["errors"]
            created.append(body["data"]["createOrgNode"]["id"])
    return created


async def stored_below(world: World, parent: str | None) -> set[str]:
    """The ids of the nodes stored with `parent` (None: the roots) as their parent."""
    ref = "ROOT" if parent is None else local_id(parent, "OrgNode").split(".")[-1]
    items = await world.partition("T#acme#ORG", "NODE#")
    return {item["node_id"] for item in items if item["parent_ref"] == ref}


async def listed_below(world: World, parent: str | None) -> set[str]:
    if parent is None:
        nodes = (await world.acme.data(ROOTS))["orgRoots"]
    else:
        nodes = (await world.acme.data(CHILDREN, {"id": parent}))["orgNode"]["children"]
    return {local_id(node["id"], "OrgNode").split(".")[-1] for node in nodes}


async def race_creates(world: World, parent: str | None, count: int) -> list[list[str]]:
    bodies = await asyncio.gather(
        *(world.acme(CREATE, {"name": f"racer {n}", "parent": parent}) for n in range(count))
    )
    return [codes(body) for body in bodies]


async def assert_full(world: World, parent: str | None) -> None:
    stored = await stored_below(world, parent)
    assert len(stored) == MAX_CHILDREN
    assert await listed_below(world, parent) == stored


async def test_concurrent_creates_stop_at_a_node_s_cap(world: World) -> None:
    parent = (await world.acme.data(CREATE, {"name": "parent"}))["createOrgNode"]["id"]
    await create_many(world.acme, MAX_CHILDREN - 5, parent, "child")
    outcomes = await race_creates(world, parent, 30)
    assert outcomes.count([]) == 5
    assert outcomes.count(["BAD_USER_INPUT"]) == 25, outcomes
    await assert_full(world, parent)


async def test_concurrent_creates_stop_at_a_tenant_s_roots_cap(world: World) -> None:
    await create_many(world.acme, MAX_CHILDREN - 5, None, "root")
    outcomes = await race_creates(world, None, 30)
    assert outcomes.count([]) == 5
    assert outcomes.count(["BAD_USER_INPUT"]) == 25, outcomes
    await assert_full(world, None)
    globex = await world.globex.data(CREATE, {"name": "own tenant, own cap"})
    assert globex["createOrgNode"]["id"]


async def test_concurrent_moves_stop_at_the_new_parent_s_cap(world: World) -> None:
    acme = world.acme
    target, source = await create_many(acme, 2, None, "top")
    await create_many(acme, MAX_CHILDREN - 3, target, "child")
    movers = await create_many(acme, 20, source, "mover")
    bodies = await asyncio.gather(
        *(
            acme(MOVE, {"i": {"id": mover, "expectedVersion": 1, "newParentId": target}})
            for mover in movers
        )
    )
    outcomes = [codes(body) for body in bodies]
    assert outcomes.count([]) == 3
    assert outcomes.count(["BAD_USER_INPUT"]) == 17, outcomes
    await assert_full(world, target)
    assert len(await listed_below(world, source)) == 17
    # the source's count went down with each move: it takes 83 more children, not 80
    await create_many(acme, MAX_CHILDREN - 17, source, "refill")
    assert await race_creates(world, source, 1) == [["BAD_USER_INPUT"]]


async def test_a_delete_frees_a_place(world: World) -> None:
    acme = world.acme
    parent = (await acme.data(CREATE, {"name": "parent"}))["createOrgNode"]["id"]
    children = await create_many(acme, MAX_CHILDREN, parent, "child")
    assert await race_creates(world, parent, 1) == [["BAD_USER_INPUT"]]
    await acme.data(DELETE, {"i": {"id": children[0], "expectedVersion": 1}})
    assert sorted(await race_creates(world, parent, 2)) == [[], ["BAD_USER_INPUT"]]
    await assert_full(world, parent)


async def test_parents_stored_before_counts_are_counted_when_first_changed(
    world: World,
) -> None:
    acme = world.acme
    parent = (await acme.data(CREATE, {"name": "parent"}))["createOrgNode"]["id"]
    children = await create_many(acme, MAX_CHILDREN - 1, parent, "child")
    # as stored before nodes kept counts: no count on the parent, no roots item
    parent_key = {"PK": "T#acme#ORG", "SK": f"NODE#{local_id(parent, 'OrgNode')}"}
    await world.store.update(Update(parent_key, remove=("child_count",)))
    await world.store.delete(Delete(roots_key("acme")))
    outcomes = await race_creates(world, parent, 3)
    assert sorted(outcomes) == [[], ["BAD_USER_INPUT"], ["BAD_USER_INPUT"]]
    await assert_full(world, parent)
    await world.store.update(Update(parent_key, remove=("child_count",)))
    await acme.data(DELETE, {"i": {"id": children[0], "expectedVersion": 1}})
    assert sorted(await race_creates(world, parent, 2)) == [[], ["BAD_USER_INPUT"]]
    await create_many(acme, MAX_CHILDREN - 1, None, "root")
    assert await race_creates(world, None, 2) == [["BAD_USER_INPUT"], ["BAD_USER_INPUT"]]


async def count_of(world: World, parent: str | None) -> int:
    """The count of children stored on a parent (the tenant's roots item for None)."""
    key = (
        roots_key("acme")
        if parent is None
        else {"PK": "T#acme#ORG", "SK": f"NODE#{local_id(parent, 'OrgNode')}"}
    )
    item = await world.store.get(Get(key, consistent=True))
    assert item is not None
    count: int = item["child_count"]
    return count


async def test_a_large_move_moves_its_count_and_gives_it_back_when_it_gives_up(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    acme = world.acme
    source, target = await create_many(acme, 2, None, "top")
    big = (await acme.data(CREATE, {"name": "big", "parent": source}))["createOrgNode"]["id"]
    await create_many(acme, 60, big, "kid")  # more than one transaction moves
    await create_many(acme, MAX_CHILDREN - 1, target, "child")
    move = {"id": big, "expectedVersion": 61, "newParentId": target}

    async def busy(*args: object, **kwargs: object) -> None:
        if kwargs.get("ours"):
            raise Conflict("a move or delete is still at work below this org node")

    monkeypatch.setattr(org_changes, "_no_work_below", busy)
    assert await acme.codes(MOVE, {"i": move}) == ["CONFLICT"]  # locked, then given up
    assert (await count_of(world, source), await count_of(world, target)) == (1, 99)
    monkeypatch.undo()
    monkeypatch.setattr(cleanup, "INLINE_SECONDS", 0.0)
    monkeypatch.setattr(cleanup, "spawn", lambda s, task: None)
    payload = (await acme.data(MOVE, {"i": move}))["moveOrgNode"]
    assert payload["complete"] is False  # the root has moved; its descendants follow
    assert (await count_of(world, source), await count_of(world, target)) == (0, 100)
    monkeypatch.undo()
    assert await race_creates(world, target, 1) == [["BAD_USER_INPUT"]]
    await cleanup.resume_all(Session(world.store, CursorCodec(b"k" * 32)))
    await cleanup.drain()
    await assert_full(world, target)
    moved = (await acme.data(CHILDREN, {"id": payload["node"]["id"]}))["orgNode"]["children"]
    assert len(moved) == 60


async def test_concurrent_memberships_stop_at_a_user_s_cap(world: World) -> None:
    acme = world.acme
    user = await acme.create_user("joiner@example.org")
    created: list[dict[str, Any]] = []
    for start in range(0, MAX_GROUPS_PER_USER + 25, 25):
        names = [f"G{n}" for n in range(start, start + 25)]
        created.extend(await asyncio.gather(*(acme.create_group(name) for name in names)))
    for start in range(0, MAX_GROUPS_PER_USER - 5, 10):
        end = min(start + 10, MAX_GROUPS_PER_USER - 5)
        await asyncio.gather(*(acme.add_member(g["id"], user["id"]) for g in created[start:end]))
    bodies = await asyncio.gather(
        *(
            acme(ADD_MEMBER, {"g": group["id"], "u": user["id"]})
            for group in created[MAX_GROUPS_PER_USER - 5 :]
        )
    )
    outcomes = [codes(body) for body in bodies]
    assert outcomes.count([]) == 5
    assert outcomes.count(["BAD_USER_INPUT"]) == 25, outcomes
    ids = await stored_ids(world, user["id"])
    assert ids is not None
    assert len(ids) == MAX_GROUPS_PER_USER
    memberships = await world.partition(f"T#acme#USER#{local_id(user['id'], 'User')}", "GROUP#")
    assert sorted(item["group_id"] for item in memberships) == sorted(ids)


async def test_a_move_to_the_roots_keeps_to_their_cap(world: World) -> None:
    acme = world.acme
    roots = await create_many(acme, MAX_CHILDREN, None, "root")
    child = (await acme.data(CREATE, {"name": "child", "parent": roots[0]}))["createOrgNode"]
    to_root = {"i": {"id": child["id"], "expectedVersion": 1}}
    assert await acme.codes(MOVE, to_root) == ["BAD_USER_INPUT"]
    await acme.data(DELETE, {"i": {"id": roots[-1], "expectedVersion": 1}})
    assert (await acme.data(MOVE, to_root))["moveOrgNode"]["complete"] is True
    await assert_full(world, None)
    assert (await count_of(world, None), await count_of(world, roots[0])) == (MAX_CHILDREN, 0)

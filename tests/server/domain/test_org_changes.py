"""Deleting and moving org nodes: leaves, subtrees, moves in one transaction and moves that
need a resumable task (the subtree refuses changes while it moves)."""

from __future__ import annotations

import pytest

from keygraph.cursor import CursorCodec
from keygraph.store import Session
from server.domain import cleanup
from tests.ids import local_id
from tests.server.conftest import World

CREATE = """mutation($name: String!, $parent: ID) {
  createOrgNode(input: {name: $name, parentId: $parent}) { id version } }"""
DELETE = """mutation($i: DeleteOrgNodeInput!) { deleteOrgNode(input: $i) { deletedId complete } }"""
MOVE = """mutation($i: MoveOrgNodeInput!) {
  moveOrgNode(input: $i) { complete node { id name depth version parent { id }
    ancestors { name } } } }"""
TREE = """query($id: ID!) { orgNode(id: $id) { name depth
  descendants(first: 100) { edges { node { name depth ancestors { name } } } } } }"""


async def create(world: World, name: str, parent: str | None = None) -> str:
    data = await world.acme.data(CREATE, {"name": name, "parent": parent})
    node_id: str = data["createOrgNode"]["id"]
    return node_id


async def version(world: World, node_id: str) -> int:
    data = await world.acme.data(f'{{ orgNode(id: "{node_id}") {{ version }} }}')
    found: int = data["orgNode"]["version"]
    return found


async def test_delete_a_leaf_and_a_subtree(world: World) -> None:
    acme = world.acme
    root = await create(world, "root")
    assert await version(world, root) == 1
    team = await create(world, "team", root)
    assert await version(world, root) == 2  # a new child raises its parent's version
    leaf = await create(world, "leaf", team)

    stale = {"id": team, "expectedVersion": 1}
    assert await acme.codes(DELETE, {"i": stale}) == ["CONFLICT"]
    not_leaf = {"id": team, "expectedVersion": 2}
    assert await acme.codes(DELETE, {"i": not_leaf}) == ["BAD_USER_INPUT"]
    done = await acme.data(DELETE, {"i": {"id": leaf, "expectedVersion": 1}})
    assert done["deleteOrgNode"] == {"deletedId": leaf, "complete": True}
    assert await version(world, team) == 3  # its child went

    await create(world, "again", team)
    cascade = {"id": root, "expectedVersion": await version(world, root), "cascade": True}
    assert (await acme.data(DELETE, {"i": cascade}))["deleteOrgNode"]["complete"] is True
    assert (await acme.data("{ orgRoots { id } }"))["orgRoots"] == []
    assert await world.partition("T#acme#ORG", "NODE#") == []
    assert await world.partition("T#acme#ORG", "ROOTS") == [  # the tenant's count of roots
        {"_type": "ORG_ROOTS", "child_count": 0, "PK": "T#acme#ORG", "SK": "ROOTS"}
    ]
    assert await acme.codes(DELETE, {"i": {"id": root, "expectedVersion": 1}}) == ["NOT_FOUND"]


async def test_move_a_subtree_in_one_transaction(world: World) -> None:
    acme = world.acme
    a, b = await create(world, "a"), await create(world, "b")
    x = await create(world, "x", a)
    y = await create(world, "y", x)
    await create(world, "z", y)

    assert await acme.codes(MOVE, {"i": {"id": a, "expectedVersion": 2, "newParentId": y}}) == [
        "BAD_USER_INPUT"  # below itself
    ]
    moved = await acme.data(MOVE, {"i": {"id": x, "expectedVersion": 2, "newParentId": b}})
    payload = moved["moveOrgNode"]
    assert payload["complete"] is True
    assert payload["node"]["parent"]["id"] == b
    assert [n["name"] for n in payload["node"]["ancestors"]] == ["b"]
    tree = (await acme.data(TREE, {"id": payload["node"]["id"]}))["orgNode"]
    below = [(e["node"]["name"], e["node"]["depth"]) for e in tree["descendants"]["edges"]]
    assert below == [("y", 2), ("z", 3)]
    assert [a["name"] for a in tree["descendants"]["edges"][1]["node"]["ancestors"]] == [
        "b",
        "x",
        "y",
    ]
    children = await acme.data(f'{{ orgNode(id: "{a}") {{ children {{ name }} }} }}')
    assert children["orgNode"]["children"] == []
    assert (await acme.data(f'{{ orgNode(id: "{x}") {{ id }} }}'))["orgNode"] is None
    # to a root
    to_root = {"id": payload["node"]["id"], "expectedVersion": payload["node"]["version"]}
    rooted = (await acme.data(MOVE, {"i": to_root}))["moveOrgNode"]["node"]
    assert (rooted["depth"], rooted["parent"]) == (0, None)


async def test_a_large_move_locks_the_subtree_until_done(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    acme = world.acme
    a, b = await create(world, "a"), await create(world, "b")
    top = await create(world, "top", a)
    kids = [await create(world, f"k{n:02}", top) for n in range(60)]
    await create(world, "grandchild", kids[0])
    monkeypatch.setattr(cleanup, "INLINE_SECONDS", 0.0)
    monkeypatch.setattr(cleanup, "spawn", lambda s, task: None)
    move = {"id": top, "expectedVersion": await version(world, top), "newParentId": b}
    payload = (await acme.data(MOVE, {"i": move}))["moveOrgNode"]
    assert payload["complete"] is False
    new_top = payload["node"]["id"]
    # while it moves, the subtree refuses changes, wherever its nodes are now
    for parent in (new_top, kids[1]):
        body = await acme(CREATE, {"name": "late", "parent": parent})
        assert [e["extensions"]["code"] for e in body["errors"]] == ["NOT_FOUND"]
    # and no delete or move above it can race with it
    cascade = {"id": b, "expectedVersion": await version(world, b), "cascade": True}
    assert await acme.codes(DELETE, {"i": cascade}) == ["CONFLICT"]
    away = {"id": a, "expectedVersion": await version(world, a), "newParentId": b}
    assert await acme.codes(MOVE, {"i": away}) == ["CONFLICT"]

    monkeypatch.undo()
    session = _session(world)
    assert await cleanup.resume_all(session) == 1
    await cleanup.drain()
    tree = (await acme.data(TREE, {"id": new_top}))["orgNode"]
    names = sorted(e["node"]["name"] for e in tree["descendants"]["edges"])
    assert names == sorted([f"k{n:02}" for n in range(60)] + ["grandchild"])
    assert all(e["node"]["ancestors"][0]["name"] == "b" for e in tree["descendants"]["edges"])
    assert await world.partition("T#acme#ORG", f"NODE#{_local(a)}#") == []
    assert (await create(world, "after", new_top)) is not None  # unlocked


async def test_a_large_cascade_leaves_nothing_reachable(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    acme = world.acme
    root = await create(world, "root")
    kids = [await create(world, f"k{n:03}", root) for n in range(100)]
    monkeypatch.setattr(cleanup, "INLINE_SECONDS", 0.0)
    monkeypatch.setattr(cleanup, "spawn", lambda s, task: None)
    cascade = {"id": root, "expectedVersion": await version(world, root), "cascade": True}
    assert (await acme.data(DELETE, {"i": cascade}))["deleteOrgNode"]["complete"] is False
    # a child left for the cleanup is no longer reachable, nor can it get children
    assert (await acme.data(f'{{ orgNode(id: "{kids[-1]}") {{ id }} }}'))["orgNode"] is None
    body = await acme(CREATE, {"name": "late", "parent": kids[-1]})
    assert [e["extensions"]["code"] for e in body["errors"]] == ["NOT_FOUND"]
    monkeypatch.undo()
    await cleanup.resume_all(_session(world))
    await cleanup.drain()
    assert await world.partition("T#acme#ORG", "NODE#") == []


def _session(world: World) -> Session:
    return Session(world.store, CursorCodec(b"k" * 32))


def _local(global_id: str) -> str:
    return local_id(global_id, "OrgNode")

"""A user's group ids on its item: written with each membership (raising the user's
version), read without a Query of memberships, capped, removed with a deleted group, and
given by the backfill to users stored before users kept them."""

from __future__ import annotations

import asyncio

import pytest

from keygraph.cursor import CursorCodec
from keygraph.plan import Get, Update
from keygraph.store import Session
from server.domain import backfill, cleanup, groups
from tests.ids import local_id
from tests.server.conftest import World, store_counts

GROUPS = """query($id: ID!) { user(id: $id) { version
  groups(first: 10) { edges { cursor node { name } } pageInfo { hasNextPage endCursor } } } }"""


def user_key(user_id: str) -> dict[str, str]:
    return {"PK": f"T#acme#USER#{local_id(user_id, 'User')}", "SK": "PROFILE"}


async def stored_ids(world: World, user_id: str) -> list[str] | None:
    item = await world.store.get(Get(user_key(user_id), consistent=True))
    assert item is not None
    found: list[str] | None = item.get("group_ids")
    return found


def local_ids(*group_ids: str) -> list[str]:
    return groups.in_key_order(local_id(group_id, "Group") for group_id in group_ids)


async def test_memberships_keep_the_user_item_s_group_ids(world: World) -> None:
    acme = world.acme
    user = await acme.create_user("ids@example.org")
    assert await stored_ids(world, user["id"]) == []
    a, b = await acme.create_group("A"), await acme.create_group("B")
    await acme.add_member(a["id"], user["id"])
    await acme.add_member(b["id"], user["id"])
    await acme.add_member(b["id"], user["id"])  # again: nothing changes
    assert await stored_ids(world, user["id"]) == local_ids(a["id"], b["id"])
    body = await acme(GROUPS, {"id": user["id"]})
    assert body["data"]["user"]["version"] == 3  # two memberships raised it
    # in the order of the groups' ids (two made within a millisecond may sort either way)
    names = {local_id(group["id"], "Group"): group["name"] for group in (a, b)}
    expected = [names[group_id] for group_id in local_ids(a["id"], b["id"])]
    assert [e["node"]["name"] for e in body["data"]["user"]["groups"]["edges"]] == expected
    # the user with its addresses, then the groups: no Query of memberships
    assert store_counts(body) == {"storeCalls": 2, "storeWaves": 2}

    await acme.data(
        "mutation($g: ID!, $u: ID!) { removeGroupMember(groupId: $g, userId: $u) { id } }",
        {"g": a["id"], "u": user["id"]},
    )
    assert await stored_ids(world, user["id"]) == local_ids(b["id"])
    assert await world.partition(user_key(user["id"])["PK"], "GROUP#") != []


async def test_a_page_of_ids_continues_through_the_memberships_query(world: World) -> None:
    acme = world.acme
    user = await acme.create_user("pages@example.org")
    created = [await acme.create_group(f"G{n}") for n in range(3)]
    for group in created:
        await acme.add_member(group["id"], user["id"])
    query = """query($id: ID!, $after: String) { user(id: $id) { groups(first: 2, after: $after) {
      edges { cursor node { id } } pageInfo { hasNextPage endCursor } } } }"""
    first = (await acme.data(query, {"id": user["id"], "after": None}))["user"]["groups"]
    assert first["pageInfo"]["hasNextPage"] is True
    after = first["pageInfo"]["endCursor"]
    rest = (await acme.data(query, {"id": user["id"], "after": after}))["user"]["groups"]
    assert rest["pageInfo"] == {"hasNextPage": False, "endCursor": rest["edges"][0]["cursor"]}
    seen = [e["node"]["id"] for e in (*first["edges"], *rest["edges"])]
    assert sorted(seen) == sorted(group["id"] for group in created)
    await world.store.update(Update(key=user_key(user["id"]), remove=("group_ids",)))
    # the same page, and the same cursors, from the memberships
    assert (await acme.data(query, {"id": user["id"], "after": None}))["user"]["groups"] == first


async def test_a_user_belongs_to_at_most_so_many_groups(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(groups, "MAX_GROUPS_PER_USER", 2)
    acme = world.acme
    user = await acme.create_user("busy@example.org")
    created = [await acme.create_group(f"G{n}") for n in range(3)]
    for group in created[:2]:
        await acme.add_member(group["id"], user["id"])
    body = await acme(
        "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }",
        {"g": created[2]["id"], "u": user["id"]},
    )
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert body["errors"][0]["message"] == "a user belongs to at most 2 groups"
    assert await stored_ids(world, user["id"]) == local_ids(*(g["id"] for g in created[:2]))
    assert len(await world.partition(user_key(user["id"])["PK"], "GROUP#")) == 2


async def test_concurrent_memberships_of_one_user_all_land(world: World) -> None:
    acme = world.acme
    user = await acme.create_user("many@example.org")
    created = [await acme.create_group(f"G{n}") for n in range(4)]
    await asyncio.gather(*(acme.add_member(g["id"], user["id"]) for g in created))
    assert await stored_ids(world, user["id"]) == local_ids(*(g["id"] for g in created))


async def test_a_deleted_group_leaves_its_members_ids(world: World) -> None:
    acme = world.acme
    users = [await acme.create_user(f"m{n}@example.org") for n in range(3)]
    doomed, kept = await acme.create_group("Doomed"), await acme.create_group("Kept")
    for user in users:
        await acme.add_member(doomed["id"], user["id"])
        await acme.add_member(kept["id"], user["id"])
    payload = await acme.data(
        "mutation($i: DeleteInput!) { deleteGroup(input: $i) { complete } }",
        {"i": {"id": doomed["id"], "expectedVersion": 1}},
    )
    if not payload["deleteGroup"]["complete"]:
        await cleanup.drain()
    for user in users:
        assert await stored_ids(world, user["id"]) == local_ids(kept["id"])


async def test_the_backfill_gives_older_users_their_ids_once(world: World) -> None:
    acme = world.acme
    users = [await acme.create_user(f"old{n}@example.org") for n in range(3)]
    group = await acme.create_group("Old")
    for user in users[:2]:
        await acme.add_member(group["id"], user["id"])
    await world.globex.create_user("elsewhere@example.org")
    for user in users:
        await world.store.update(Update(key=user_key(user["id"]), remove=("group_ids",)))
    before = await acme(GROUPS, {"id": users[0]["id"]})
    assert store_counts(before)["storeCalls"] == 3  # the user, its memberships, the groups
    session = Session(store=world.store, cursors=CursorCodec(b"backfill-cursor-key"))

    report = await backfill.backfill_group_ids(session, "acme")
    assert (report.users, report.written, report.changed) == (3, 3, 0)
    assert [await stored_ids(world, user["id"]) for user in users] == [
        local_ids(group["id"]),
        local_ids(group["id"]),
        [],
    ]
    after = await acme(GROUPS, {"id": users[0]["id"]})
    assert after["data"] == before["data"]
    assert store_counts(after)["storeCalls"] == 2
    again = await backfill.backfill_group_ids(session, None)  # every tenant: nothing left
    assert (again.users, again.written) == (4, 0)

"""Groups end to end: create, members in both directions, idempotent add and remove."""

from __future__ import annotations

import base64

from tests.server.conftest import Api

GROUP = """query($id: ID!, $first: Int, $after: String) { group(id: $id) { id name createdAt
  members(first: $first, after: $after) { edges { node { id email } }
    pageInfo { hasNextPage endCursor } } } }"""
USER_GROUPS = """query($id: ID!) { user(id: $id) { groups { edges { node { id name } } } } }"""
REMOVE = """mutation($g: ID!, $u: ID!) { removeGroupMember(groupId: $g, userId: $u) { id
  members { edges { node { id } } } } }"""
ADD = "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }"
MISSING_USER = base64.urlsafe_b64encode(b"User:01ARZ3NDEKTSV4RRFFQ69G5FAV").decode().rstrip("=")
MISSING_GROUP = base64.urlsafe_b64encode(b"Group:01ARZ3NDEKTSV4RRFFQ69G5FAV").decode().rstrip("=")


async def _member_ids(api: Api, group_id: str) -> list[str]:
    group = (await api.data(GROUP, {"id": group_id}))["group"]
    return [edge["node"]["id"] for edge in group["members"]["edges"]]


async def _group_ids(api: Api, user_id: str) -> list[str]:
    user = (await api.data(USER_GROUPS, {"id": user_id}))["user"]
    return [edge["node"]["id"] for edge in user["groups"]["edges"]]


async def test_create_group_and_read_it(acme: Api) -> None:
    group = await acme.create_group("Readers")
    found = (await acme.data(GROUP, {"id": group["id"]}))["group"]
    assert {k: found[k] for k in ("id", "name", "createdAt")} == group
    assert found["members"]["edges"] == []


async def test_membership_is_seen_from_both_sides(acme: Api) -> None:
    users = [await acme.create_user(f"m{i}@example.org") for i in range(3)]
    readers, writers = await acme.create_group("Readers"), await acme.create_group("Writers")
    for user in users:
        await acme.add_member(readers["id"], user["id"])
    await acme.add_member(writers["id"], users[0]["id"])
    assert sorted(await _member_ids(acme, readers["id"])) == sorted(u["id"] for u in users)
    assert await _member_ids(acme, writers["id"]) == [users[0]["id"]]
    assert sorted(await _group_ids(acme, users[0]["id"])) == sorted([readers["id"], writers["id"]])
    assert await _group_ids(acme, users[1]["id"]) == [readers["id"]]


async def test_adding_twice_keeps_one_membership(acme: Api) -> None:
    user = await acme.create_user("twice@example.org")
    group = await acme.create_group("G")
    assert await acme.add_member(group["id"], user["id"]) == {"id": group["id"]}
    assert await acme.add_member(group["id"], user["id"]) == {"id": group["id"]}
    assert await _member_ids(acme, group["id"]) == [user["id"]]
    assert await _group_ids(acme, user["id"]) == [group["id"]]


async def test_remove_takes_both_directions_away_and_is_idempotent(acme: Api) -> None:
    stay, leave = await acme.create_user("stay@example.org"), await acme.create_user("go@x.org")
    group = await acme.create_group("G")
    await acme.add_member(group["id"], stay["id"])
    await acme.add_member(group["id"], leave["id"])
    for _ in range(2):
        removed = await acme.data(REMOVE, {"g": group["id"], "u": leave["id"]})
        members = removed["removeGroupMember"]["members"]["edges"]
        assert [edge["node"]["id"] for edge in members] == [stay["id"]]
    assert await _group_ids(acme, leave["id"]) == []


async def test_membership_needs_an_existing_user_and_group(acme: Api) -> None:
    user = await acme.create_user("real@example.org")
    group = await acme.create_group("Real")
    for mutation in (ADD, REMOVE):
        assert await acme.codes(mutation, {"g": MISSING_GROUP, "u": user["id"]}) == ["NOT_FOUND"]
        assert await acme.codes(mutation, {"g": group["id"], "u": MISSING_USER}) == ["NOT_FOUND"]
        assert await acme.codes(mutation, {"g": user["id"], "u": group["id"]}) == ["NOT_FOUND"]
    assert await _member_ids(acme, group["id"]) == []
    assert await _group_ids(acme, user["id"]) == []


async def test_members_page_with_cursors(acme: Api) -> None:
    group = await acme.create_group("Big")
    users = [await acme.create_user(f"p{i}@example.org") for i in range(5)]
    for user in users:
        await acme.add_member(group["id"], user["id"])
    seen: list[str] = []
    after = None
    while True:
        data = await acme.data(GROUP, {"id": group["id"], "first": 2, "after": after})
        members = data["group"]["members"]
        seen += [edge["node"]["id"] for edge in members["edges"]]
        if not members["pageInfo"]["hasNextPage"]:
            break
        after = members["pageInfo"]["endCursor"]
    assert sorted(seen) == sorted(user["id"] for user in users)
    assert len(seen) == 5


async def test_group_name_is_validated(acme: Api) -> None:
    query = "mutation($n: String!) { createGroup(input: {name: $n}) { id } }"
    assert await acme.codes(query, {"n": ""}) == ["BAD_USER_INPUT"]
    assert await acme.codes(query, {"n": "x" * 201}) == ["BAD_USER_INPUT"]


async def test_missing_group_reads_as_null(acme: Api) -> None:
    assert (await acme.data(GROUP, {"id": MISSING_GROUP}))["group"] is None

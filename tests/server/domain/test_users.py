"""Users end to end: create, read by id / email / page, update with optimistic locking."""

from __future__ import annotations

import base64

from tests.server.conftest import USER_FIELDS, Api

USER = f"query($id: ID!) {{ user(id: $id) {{ {USER_FIELDS} }} }}"
BY_EMAIL = "query($e: String!) { userByEmail(email: $e) { id email } }"
UPDATE = f"mutation($i: UpdateUserInput!) {{ updateUser(input: $i) {{ {USER_FIELDS} }} }}"
USERS = """query($first: Int, $after: String) {
  users(first: $first, after: $after) {
    edges { cursor node { id email } } pageInfo { hasNextPage endCursor } } }"""


async def test_create_user_then_read_it_by_id_and_by_email(acme: Api) -> None:
    created = await acme.create_user("Ada@Example.org", "Ada")
    assert created["email"] == "Ada@Example.org"  # kept as given
    assert created["version"] == 1
    assert base64.urlsafe_b64decode(created["id"] + "==").decode().startswith("User:")
    assert (await acme.data(USER, {"id": created["id"]}))["user"] == created
    for spelling in ("ada@example.org", "ADA@EXAMPLE.ORG", "Ada@Example.org"):
        found = (await acme.data(BY_EMAIL, {"e": spelling}))["userByEmail"]
        assert found == {"id": created["id"], "email": "Ada@Example.org"}


async def test_missing_and_foreign_type_ids_read_as_null(acme: Api) -> None:
    group = await acme.create_group("g")
    assert (await acme.data(USER, {"id": group["id"]}))["user"] is None
    missing = base64.urlsafe_b64encode(b"User:01ARZ3NDEKTSV4RRFFQ69G5FAV").decode().rstrip("=")
    assert (await acme.data(USER, {"id": missing}))["user"] is None
    assert (await acme.data(BY_EMAIL, {"e": "nobody@example.org"}))["userByEmail"] is None


async def test_malformed_id_is_bad_user_input(acme: Api) -> None:
    assert await acme.codes(USER, {"id": "not an id!"}) == ["BAD_USER_INPUT"]


async def test_email_is_unique_per_tenant_ignoring_case(acme: Api, globex: Api) -> None:
    await acme.create_user("bo@example.org", "Bo")
    query = 'mutation { createUser(input: {email: "BO@example.org", name: "Other"}) { id } }'
    assert await acme.codes(query) == ["CONFLICT"]
    users = (await acme.data(USERS))["users"]["edges"]
    assert [edge["node"]["email"] for edge in users] == ["bo@example.org"]
    # another tenant may use the same email
    assert (await globex.create_user("bo@example.org", "Bo"))["email"] == "bo@example.org"


async def test_invalid_user_input_is_refused_and_writes_nothing(acme: Api) -> None:
    for email, name in (("no-at-sign", "X"), ("a@b.c", ""), ("x" * 251 + "@b.c", "X")):
        query = (
            "mutation($e: String!, $n: String!) { createUser(input: {email: $e, name: $n}) { id } }"
        )
        assert await acme.codes(query, {"e": email, "n": name}) == ["BAD_USER_INPUT"]
    assert (await acme.data(USERS))["users"]["edges"] == []


async def test_users_pages_oldest_first_with_cursors(acme: Api) -> None:
    created = [await acme.create_user(f"u{i}@example.org", f"U{i}") for i in range(5)]
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        page = (await acme.data(USERS, {"first": 2, "after": after}))["users"]
        pages += 1
        seen += [edge["node"]["id"] for edge in page["edges"]]
        edges = page["edges"]
        # endCursor is the last edge's cursor, on the last page too
        assert edges[-1]["cursor"] == page["pageInfo"]["endCursor"]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == [user["id"] for user in created]
    ids = [user["id"] for user in created]
    # every edge's cursor resumes right after its own node
    whole = (await acme.data(USERS, {"first": 5}))["users"]
    for index, edge in enumerate(whole["edges"]):
        rest = (await acme.data(USERS, {"first": 5, "after": edge["cursor"]}))["users"]
        assert [e["node"]["id"] for e in rest["edges"]] == ids[index + 1 :]
        assert rest["pageInfo"]["hasNextPage"] is False
    assert pages == 3


async def test_update_user_name_with_the_current_version(acme: Api) -> None:
    user = await acme.create_user("cy@example.org", "Cy")
    updated = (
        await acme.data(UPDATE, {"i": {"id": user["id"], "expectedVersion": 1, "name": "Cyrus"}})
    )["updateUser"]
    assert (updated["name"], updated["email"], updated["version"]) == ("Cyrus", "cy@example.org", 2)
    assert (await acme.data(USER, {"id": user["id"]}))["user"] == updated


async def test_update_with_a_stale_version_is_conflict_and_changes_nothing(acme: Api) -> None:
    user = await acme.create_user("di@example.org", "Di")
    await acme.data(UPDATE, {"i": {"id": user["id"], "expectedVersion": 1, "name": "Diana"}})
    body = await acme(UPDATE, {"i": {"id": user["id"], "expectedVersion": 1, "name": "Stale"}})
    assert body["errors"][0]["extensions"] == {"code": "CONFLICT", "currentVersion": 2}
    assert (await acme.data(USER, {"id": user["id"]}))["user"]["name"] == "Diana"


async def test_changing_the_email_moves_the_claim(acme: Api) -> None:
    user = await acme.create_user("ed@example.org", "Ed")
    variables = {"i": {"id": user["id"], "expectedVersion": 1, "email": "Edward@example.org"}}
    assert (await acme.data(UPDATE, variables))["updateUser"]["email"] == "Edward@example.org"
    assert (await acme.data(BY_EMAIL, {"e": "ed@example.org"}))["userByEmail"] is None
    assert (await acme.data(BY_EMAIL, {"e": "edward@example.org"}))["userByEmail"]["id"] == user[
        "id"
    ]
    # the old email is free again
    assert (await acme.create_user("ed@example.org", "New Ed"))["email"] == "ed@example.org"


async def test_changing_only_the_case_of_the_email_keeps_the_claim(acme: Api) -> None:
    user = await acme.create_user("fy@example.org", "Fy")
    variables = {"i": {"id": user["id"], "expectedVersion": 1, "email": "FY@example.org"}}
    assert (await acme.data(UPDATE, variables))["updateUser"]["email"] == "FY@example.org"
    assert (await acme.data(BY_EMAIL, {"e": "fy@example.org"}))["userByEmail"]["id"] == user["id"]


async def test_taking_another_users_email_is_conflict_and_changes_nothing(acme: Api) -> None:
    await acme.create_user("gi@example.org", "Gi")
    user = await acme.create_user("ha@example.org", "Ha")
    variables = {"i": {"id": user["id"], "expectedVersion": 1, "email": "GI@example.org"}}
    assert await acme.codes(UPDATE, variables) == ["CONFLICT"]
    assert (await acme.data(USER, {"id": user["id"]}))["user"] == user
    assert (await acme.data(BY_EMAIL, {"e": "ha@example.org"}))["userByEmail"]["id"] == user["id"]


async def test_update_of_a_missing_user_is_not_found(acme: Api) -> None:
    group = await acme.create_group("not a user")
    missing = base64.urlsafe_b64encode(b"User:01ARZ3NDEKTSV4RRFFQ69G5FAV").decode().rstrip("=")
    for user_id in (missing, group["id"]):
        variables = {"i": {"id": user_id, "expectedVersion": 1, "name": "X"}}
        assert await acme.codes(UPDATE, variables) == ["NOT_FOUND"]


async def test_invalid_update_is_bad_user_input(acme: Api) -> None:
    user = await acme.create_user("io@example.org", "Io")
    variables = {"i": {"id": user["id"], "expectedVersion": 1, "email": "broken"}}
    assert await acme.codes(UPDATE, variables) == ["BAD_USER_INPUT"]
    assert (await acme.data(USER, {"id": user["id"]}))["user"] == user


async def test_an_update_without_changes_is_bad_user_input(acme: Api) -> None:
    user = await acme.create_user("jo@example.org", "Jo")
    variables = {"i": {"id": user["id"], "expectedVersion": 1}}
    assert await acme.codes(UPDATE, variables) == ["BAD_USER_INPUT"]
    assert (await acme.data(USER, {"id": user["id"]}))["user"]["version"] == 1

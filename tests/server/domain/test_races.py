"""Writes that race: a cleanup that meets concurrent changes finishes without an INTERNAL
error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from generated.models.cleanup_task import CleanupTask
from generated.models.enums import CleanupTaskKind
from generated.queries.membership import plan_group_members
from keygraph.errors import TransactionCanceled
from keygraph.store import Session
from server.domain import cleanup
from tests.ids import local_id
from tests.server.conftest import World
from tests.server.domain.test_group_ids import stored_ids
from tests.waiting import until

DELETE_GROUP = "mutation($i: DeleteInput!) { deleteGroup(input: $i) { complete } }"
RENAME = "mutation($i: UpdateUserInput!) { updateUser(input: $i) { version } }"


def error_codes(body: dict[str, Any]) -> list[str]:
    return [error["extensions"]["code"] for error in body.get("errors") or []]


async def test_a_group_deleted_while_its_members_change_is_cleaned_up(world: World) -> None:
    acme = world.acme
    group = await acme.create_group("Busy")
    members = list(
        await asyncio.gather(*(acme.create_user(f"b{n}@example.org") for n in range(60)))
    )
    await asyncio.gather(*(acme.add_member(group["id"], user["id"]) for user in members))
    done = asyncio.Event()
    codes: list[str] = []
    answered: list[dict[str, Any]] = []

    async def rename(user_id: str) -> None:
        """Renames the user again and again until the group is deleted."""
        version = 2
        while not done.is_set():
            variables = {"i": {"id": user_id, "expectedVersion": version, "name": "Renamed"}}
            body = await acme(RENAME, variables)
            answered.append(body)
            codes.extend(error_codes(body))
            version = body["data"]["updateUser"]["version"] if body["data"] else version + 1

    async def delete() -> dict[str, Any]:
        await until(lambda: answered, "the renames to be under way")
        try:
            return await acme(DELETE_GROUP, {"i": {"id": group["id"], "expectedVersion": 1}})
        finally:
            done.set()

    deleted, *_ = await asyncio.gather(delete(), *(rename(user["id"]) for user in members[:30]))
    assert "errors" not in deleted, deleted["errors"]
    assert set(codes) <= {"CONFLICT"}  # a rename after the cleanup changed the user is stale
    await cleanup.drain()
    plan = plan_group_members("acme", local_id(group["id"], "Group"), limit=100)
    assert (await world.store.query(plan)).items == []
    for user in members:
        assert await stored_ids(world, user["id"]) == []


async def test_a_cleanup_page_that_fails_inline_goes_on_in_the_background(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    acme = world.acme
    group = await acme.create_group("Flaky")
    user = await acme.create_user("flaky@example.org")
    await acme.add_member(group["id"], user["id"])
    clean = cleanup._RUNNERS[CleanupTaskKind.GROUP]
    failures = [TransactionCanceled("lost a race", ())]

    async def flaky(s: Session, task: CleanupTask) -> bool:
        if failures:
            raise failures.pop()
        return await clean(s, task)

    monkeypatch.setitem(cleanup._RUNNERS, CleanupTaskKind.GROUP, flaky)
    body = await acme(DELETE_GROUP, {"i": {"id": group["id"], "expectedVersion": 1}})
    assert body["data"] == {"deleteGroup": {"complete": False}}, body
    await cleanup.drain()
    assert await stored_ids(world, user["id"]) == []
    assert (await acme.data(f'{{ group(id: "{group["id"]}") {{ id }} }}'))["group"] is None

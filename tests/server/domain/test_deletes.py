"""Deletes: a stale version is a CONFLICT, a missing id NOT_FOUND, and nothing stays
reachable; a delete larger than a transaction is finished by a cleanup that resumes."""

from __future__ import annotations

import pytest

from generated.models.enums import CleanupTaskKind
from generated.queries.cleanup_task import cleanup_tasks
from keygraph.cursor import CursorCodec
from keygraph.serve import create_app
from keygraph.store import Session
from server.compiled import compiled
from server.domain import cleanup, users
from server.settings import Settings
from tests.ids import local_id
from tests.server.conftest import World
from tests.server.domain.test_addresses import ADD, home

DELETE = "mutation($i: DeleteInput!) {{ {field}(input: $i) {{ deletedId complete }} }}"


async def delete(world: World, field: str, node_id: str, version: int) -> dict[str, object]:
    data = await world.acme.data(
        DELETE.format(field=field), {"i": {"id": node_id, "expectedVersion": version}}
    )
    payload: dict[str, object] = data[field]
    return payload


async def codes(world: World, field: str, node_id: str, version: int) -> list[str]:
    variables = {"i": {"id": node_id, "expectedVersion": version}}
    return await world.acme.codes(DELETE.format(field=field), variables)


async def test_delete_user_takes_everything_and_frees_the_email(world: World) -> None:
    acme = world.acme
    user = await acme.create_user("dora@example.org")
    other = await acme.create_user("eve@example.org")
    group = await acme.create_group("Readers")
    await acme.add_member(group["id"], user["id"])
    await acme.add_member(group["id"], other["id"])
    order = await acme.create_order(user["id"], [("A", 1, 100)])
    await acme.data(ADD, {"i": home(user["id"])})
    version = (await acme.data(f'{{ user(id: "{user["id"]}") {{ version }} }}'))["user"]

    assert await codes(world, "deleteUser", user["id"], 1) == ["CONFLICT"]
    payload = await delete(world, "deleteUser", user["id"], version["version"])
    assert payload == {"deletedId": user["id"], "complete": True}
    assert await codes(world, "deleteUser", user["id"], 2) == ["NOT_FOUND"]

    gone = await acme.data(
        f"""{{ user(id: "{user["id"]}") {{ id }} order(id: "{order["id"]}") {{ id }}
        userByEmail(email: "dora@example.org") {{ id }}
        group(id: "{group["id"]}") {{ members(first: 10) {{ edges {{ node {{ id }} }} }} }} }}"""
    )
    assert (gone["user"], gone["order"], gone["userByEmail"]) == (None, None, None)
    assert [e["node"]["id"] for e in gone["group"]["members"]["edges"]] == [other["id"]]
    assert await world.partition(f"T#acme#USER#{local_id(user['id'], 'User')}") == []
    assert await world.partition(f"T#acme#ORDER#{local_id(order['id'], 'Order')}") == []
    again = await acme.create_user("DORA@example.org")  # the email is free at once
    assert again["email"] == "DORA@example.org"


async def test_delete_order_group_shop(world: World) -> None:
    acme = world.acme
    user = await acme.create_user("finn@example.org")
    order = await acme.create_order(user["id"], [("A", 1, 100)])
    assert await codes(world, "deleteOrder", order["id"], 2) == ["CONFLICT"]
    assert (await delete(world, "deleteOrder", order["id"], 1))["complete"] is True
    orders = await acme.data(
        f'{{ user(id: "{user["id"]}") {{ orders(first: 5) {{ edges {{ node {{ id }} }} }} }} }}'
    )
    assert orders["user"]["orders"]["edges"] == []

    group = await acme.create_group("Gone")
    await acme.add_member(group["id"], user["id"])
    assert (await delete(world, "deleteGroup", group["id"], 1))["complete"] is True
    groups = await acme.data(
        f'{{ user(id: "{user["id"]}") {{ groups(first: 5) {{ edges {{ node {{ id }} }} }} }} }}'
    )
    assert groups["user"]["groups"]["edges"] == []
    assert await world.partition(f"T#acme#USER#{local_id(user['id'], 'User')}", "GROUP#") == []
    assert await codes(world, "deleteGroup", group["id"], 1) == ["NOT_FOUND"]

    shop = await acme.data(
        'mutation { createShop(input: {name: "S", lat: 1, lng: 2}) { id version } }'
    )
    shop_id = shop["createShop"]["id"]
    assert await codes(world, "deleteShop", shop_id, 3) == ["CONFLICT"]
    assert (await delete(world, "deleteShop", shop_id, 1))["complete"] is True
    assert (await acme.data(f'{{ shop(id: "{shop_id}") {{ id }} }}'))["shop"] is None


async def test_another_tenant_cannot_delete(world: World) -> None:
    acme, globex = world.acme, world.globex
    user = await acme.create_user("gil@example.org")
    variables = {"i": {"id": user["id"], "expectedVersion": 1}}
    assert await globex.codes(DELETE.format(field="deleteUser"), variables) == ["NOT_FOUND"]
    assert (await acme.data(f'{{ user(id: "{user["id"]}") {{ email }} }}'))["user"] == {
        "email": "gil@example.org"
    }
    order_id = (await acme.create_order(user["id"], [("A", 1, 1)]))["id"]
    variables = {"i": {"id": order_id, "expectedVersion": 1}}
    assert await globex.codes(DELETE.format(field="deleteOrder"), variables) == ["NOT_FOUND"]


async def test_a_large_delete_is_finished_by_a_cleanup_that_resumes(
    world: World, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user with more than a transaction's worth of items: the first request removes the
    user (NOT_FOUND at once) and records a task; killed before the cleanup runs, the rest
    is removed when a server starts again."""
    acme = world.acme
    user = await acme.create_user("heavy@example.org")
    for n in range(60):  # 120 items: more than one transaction takes
        await acme.create_order(user["id"], [(f"S{n}", 1, 1)])
    monkeypatch.setattr(cleanup, "INLINE_SECONDS", 0.0)
    monkeypatch.setattr(cleanup, "spawn", lambda s, task: None)  # the process dies here
    session = Session(world.store, CursorCodec(b"k" * 32))
    user_id = local_id(user["id"], "User")
    assert await users.delete_user(session, "acme", user_id, 1) is False
    assert (await acme.data(f'{{ user(id: "{user["id"]}") {{ id }} }}'))["user"] is None
    left = await world.partition(f"T#acme#USER#{user_id}")
    assert 0 < len(left) < 120  # one page was removed inline, the rest is pending
    pending = (await cleanup_tasks(session, first=10)).items
    assert [(t.kind, t.subject) for t in pending] == [(CleanupTaskKind.USER, user_id)]

    monkeypatch.undo()
    app = create_app(compiled(settings, world.store))  # what `serve` runs, started again
    async with app.router.lifespan_context(app):
        await cleanup.drain()
    assert await world.partition(f"T#acme#USER#{user_id}") == []
    assert (await cleanup_tasks(session, first=10)).items == []

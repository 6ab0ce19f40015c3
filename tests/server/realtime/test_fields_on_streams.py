"""Each subscription field on each store's own change stream (the embedded store's change
log, DynamoDB Local's Streams), through the app over graphql-transport-ws: the events of
GraphQL mutations, of a write made outside GraphQL, and a resume after a cursor that gets
exactly what was missed (no gap, no duplicate at the seam), then live events. Every
event's payload is checked whole.

Each resume holds the stream's reader back while the writes it misses are made: the
subscription gets them from its replay, then (once released) the reader hands them to it
live as well, where they must be dropped; a live write's event follows, and nothing more."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from starlette.applications import Starlette

from generated.keys.org_node import key as org_node_key
from generated.models.order_item import OrderItem
from generated.models.org_node import OrgNode as OrgNodeRecord
from generated.models.user import User as UserModel
from generated.queries.org_node import get_org_node
from generated.queries.user import get_user
from generated.table import TABLE
from keygraph.ids import new_id
from keygraph.plan import Put, Update
from keygraph.store import Store
from keygraph.stores import stream_of
from server.domain.org import COUNT, org_node_record
from server.domain.tx import write_in_chunks
from server.settings import Settings
from tests.conftest import StoreFactory
from tests.ids import local_id
from tests.server.conftest import Api
from tests.server.realtime.conftest import Connect, spec_app
from tests.server.realtime.reader_watch import ReaderWatch
from tests.server.realtime.streams_harness import (
    MEMBERS,
    ORDERS,
    ORG,
    USER,
    below,
    delete,
    delete_node,
    line,
    move,
    node,
    node_global_id,
    order_view,
    path_of,
    remove_member,
    rename_user,
    replace_second_line,
    session,
    subscribed,
    unordered,
)
from tests.server.realtime.test_fields import create_node, update_status

POLL = {"embedded": 0.01, "dynamodb-local": 0.02}
"""The reader's poll interval: short, so that the tests wait little for each event."""


@pytest.fixture
async def store(kind: str, store_factory: StoreFactory) -> Store:
    return await store_factory(kind, TABLE)


@pytest.fixture
def watch(store: Store) -> ReaderWatch:
    return ReaderWatch(stream_of(store), store)


@pytest.fixture
async def app(
    settings: Settings, store: Store, kind: str, watch: ReaderWatch
) -> AsyncIterator[Starlette]:
    polled = replace(settings, stream_poll_interval=POLL[kind])
    built = spec_app(polled, store, watch)
    async with built.router.lifespan_context(built):
        yield built


async def test_order_changed(connect: Connect, acme: Api, store: Store, watch: ReaderWatch) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    a, b, c = line("A-1", 2, 150), line("B-2", 1, 500), line("C-3", 4, 25)
    async with subscribed(connect, acme, watch, "orderChanged", ORDERS, {"u": bob["id"]}) as sub:
        order = await acme.create_order(bob["id"], [("A-1", 2, 150), ("B-2", 1, 500)])
        paid = await update_status(acme, order, "PAID")
        assert paid["version"] == 2
        await replace_second_line(
            store,
            order["id"],
            OrderItem(sku="C-3", name="C-3 item", quantity=4, unit_price_cents=25),
        )
        assert await sub.take(3) == [
            {"change": "CREATED", "order": order_view(order["id"], "PENDING", 1, a, b)},
            {"change": "UPDATED", "order": order_view(order["id"], "PAID", 2, a, b)},
            {"change": "UPDATED", "order": order_view(order["id"], "PAID", 3, a, c)},
        ]
        cursor = sub.cursors[-1]
    await watch.hold()  # see the module's docstring
    await delete(acme, "deleteOrder", order["id"], 3)  # missed while away
    second = await acme.create_order(bob["id"], [("B-2", 1, 500)])
    resumed = {"u": bob["id"], "after": cursor}
    async with subscribed(
        connect, acme, watch, "orderChanged", ORDERS, resumed, caught_up=False
    ) as sub:
        assert await sub.take(2) == [
            {"change": "DELETED", "order": order_view(order["id"], "PAID", 3, a, c)},
            {"change": "CREATED", "order": order_view(second["id"], "PENDING", 1, b)},
        ]
        watch.release()
        await update_status(acme, second, "CANCELLED")
        assert await sub.take(1) == [
            {"change": "UPDATED", "order": order_view(second["id"], "CANCELLED", 2, b)},
        ]
        await sub.nothing_more()


async def test_user_changed(connect: Connect, acme: Api, store: Store, watch: ReaderWatch) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    user_id = bob["id"]

    def user(name: str, version: int) -> dict[str, Any]:
        return {"id": user_id, "name": name, "email": "bob@acme.test", "version": version}

    async with subscribed(connect, acme, watch, "userChanged", USER, {"id": user_id}) as sub:
        await rename_user(acme, user_id, 1, "Robert")
        kept = await get_user(session(store), "acme", local_id(user_id, "User"), consistent=True)
        assert isinstance(kept, UserModel)
        await delete(acme, "deleteUser", user_id, 2)
        await store.put(Put(item=kept.to_item("acme")))  # a script restores it from a backup
        assert await sub.take(3) == [
            {"change": "UPDATED", "user": user("Robert", 2)},
            {"change": "DELETED", "user": user("Robert", 2)},
            {"change": "CREATED", "user": user("Robert", 2)},
        ]
        cursor = sub.cursors[-1]
    await watch.hold()
    await rename_user(acme, user_id, 2, "Bobby")  # missed while away
    resumed = {"id": user_id, "after": cursor}
    async with subscribed(
        connect, acme, watch, "userChanged", USER, resumed, caught_up=False
    ) as sub:
        assert await sub.take(1) == [{"change": "UPDATED", "user": user("Bobby", 3)}]
        watch.release()
        await rename_user(acme, user_id, 3, "Rob")
        assert await sub.take(1) == [{"change": "UPDATED", "user": user("Rob", 4)}]
        await sub.nothing_more()


async def test_group_members_changed(connect: Connect, acme: Api, watch: ReaderWatch) -> None:
    group_id = (await acme.create_group("Ops"))["id"]
    bob, carol, dave = [
        await acme.create_user(f"{name.lower()}@acme.test", name)
        for name in ("Bob", "Carol", "Dave")
    ]

    def member(change: str, user: dict[str, Any], name: str | None) -> dict[str, Any]:
        seen = None if name is None else {"name": name}
        return {"change": change, "groupId": group_id, "userId": user["id"], "user": seen}

    members = {"g": group_id}
    async with subscribed(connect, acme, watch, "groupMembersChanged", MEMBERS, members) as sub:
        await acme.add_member(group_id, bob["id"])
        await acme.add_member(group_id, carol["id"])
        await remove_member(acme, group_id, bob["id"])
        # each event's member is read as it is sent: before carol goes
        assert await sub.take(3) == [
            member("CREATED", bob, "Bob"),
            member("CREATED", carol, "Carol"),
            member("DELETED", bob, "Bob"),
        ]
        # the user's deletion leaves its memberships to a cleanup task, which removes them
        await delete(acme, "deleteUser", carol["id"], 2)  # joining a group raised its version
        assert await sub.take(1) == [member("DELETED", carol, None)]
        cursor = sub.cursors[-1]
    await watch.hold()
    await acme.add_member(group_id, bob["id"])  # missed while away
    await acme.add_member(group_id, dave["id"])
    resumed = {"g": group_id, "after": cursor}
    async with subscribed(
        connect, acme, watch, "groupMembersChanged", MEMBERS, resumed, caught_up=False
    ) as sub:
        assert await sub.take(2) == [member("CREATED", bob, "Bob"), member("CREATED", dave, "Dave")]
        watch.release()
        await remove_member(acme, group_id, dave["id"])
        assert await sub.take(1) == [member("DELETED", dave, "Dave")]
        await sub.nothing_more()


async def test_org_node_changed(
    connect: Connect, acme: Api, store: Store, watch: ReaderWatch
) -> None:
    root = (await create_node(acme, "Root"))["id"]
    other = (await create_node(acme, "Other"))["id"]
    async with subscribed(connect, acme, watch, "orgNodeChanged", ORG, {"id": root}) as sub:
        team = (await create_node(acme, "Team", root))["id"]
        assert unordered(await sub.take(2)) == unordered(
            [node("CREATED", team, "Team", 1), node("UPDATED", root, "Root", 2)]
        )
        inner = (await create_node(acme, "Inner", team))["id"]
        assert unordered(await sub.take(2)) == unordered(
            [node("CREATED", inner, "Inner", 1), node("UPDATED", team, "Team", 2)]
        )
        leaf = (await create_node(acme, "Leaf", team))["id"]
        assert unordered(await sub.take(2)) == unordered(
            [node("CREATED", leaf, "Leaf", 1), node("UPDATED", team, "Team", 3)]
        )
        # a move within the subtree: its deletion at the old path, creation at the new one
        moved = await move(acme, inner, 1, root)
        assert moved == below(root, inner)
        assert unordered(await sub.take(4)) == unordered(
            [
                node("DELETED", inner, "Inner", 1),
                node("CREATED", moved, "Inner", 1),
                node("UPDATED", team, "Team", 4),
                node("UPDATED", root, "Root", 3),
            ]
        )
        await delete_node(acme, leaf, 1)  # a delete in the subtree
        assert unordered(await sub.take(2)) == unordered(
            [node("DELETED", leaf, "Leaf", 1), node("UPDATED", team, "Team", 5)]
        )
        # a script renames a node, straight to the store
        record = await get_org_node(session(store), "acme", path_of(team), consistent=True)
        assert isinstance(record, OrgNodeRecord)
        renamed = record.model_copy(update={"name": "Squad", "version": record.version + 1})
        await store.put(Put(item=renamed.to_item("acme")))
        assert await sub.take(1) == [node("UPDATED", team, "Squad", 6)]
        keep = (await create_node(acme, "Keep", team))["id"]
        assert unordered(await sub.take(2)) == unordered(
            [node("CREATED", keep, "Keep", 1), node("UPDATED", team, "Squad", 7)]
        )
        # a move out of the subtree: gone from it, with what is below it
        await move(acme, team, 7, other)
        assert unordered(await sub.take(3)) == unordered(
            [
                node("DELETED", team, "Squad", 7),
                node("DELETED", keep, "Keep", 1),
                node("UPDATED", root, "Root", 4),
            ]
        )
        cursor = sub.cursors[-1]
    await watch.hold()
    late = (await create_node(acme, "Late", root))["id"]  # missed while away
    await delete_node(acme, moved, 1)
    resumed = {"id": root, "after": cursor}
    async with subscribed(
        connect, acme, watch, "orgNodeChanged", ORG, resumed, caught_up=False
    ) as sub:
        assert unordered(await sub.take(2)) == unordered(
            [node("CREATED", late, "Late", 1), node("UPDATED", root, "Root", 5)]
        )
        assert unordered(await sub.take(2)) == unordered(
            [node("DELETED", moved, "Inner", 1), node("UPDATED", root, "Root", 6)]
        )
        watch.release()
        live = (await create_node(acme, "Live", late))["id"]
        assert unordered(await sub.take(2)) == unordered(
            [node("CREATED", live, "Live", 1), node("UPDATED", late, "Late", 2)]
        )
        await sub.nothing_more()


LARGE = 49
"""Children enough that moving their parent is too large for one transaction."""


async def import_children(store: Store, parent_id: str, count: int) -> list[str]:
    """What a script importing `count` children of a node writes, straight to the store:
    the nodes, and their parent's count of children (its version unchanged); their ids."""
    parent = path_of(parent_id)
    now = datetime.now(UTC)
    kids = [org_node_record(new_id(), f"K{i}", parent, now, child_count=0) for i in range(count)]
    await write_in_chunks(store, [Put(kid.to_item("acme")) for kid in kids])
    await store.update(Update(org_node_key("acme", parent), set={COUNT: count}))
    return [node_global_id(kid.path) for kid in kids]


async def test_org_node_changed_by_a_large_move(
    connect: Connect, acme: Api, store: Store, watch: ReaderWatch
) -> None:
    """A move too large for one transaction locks the subtree's root, then its cleanup task
    moves the root and each node below it, then unlocks it: each step's items' changes."""
    root = (await create_node(acme, "Root"))["id"]
    team = (await create_node(acme, "Team", root))["id"]
    dest = (await create_node(acme, "Dest", root))["id"]
    kids = await import_children(store, team, LARGE)
    async with subscribed(connect, acme, watch, "orgNodeChanged", ORG, {"id": root}) as sub:
        moved = await move(acme, team, 1, dest)
        assert moved == below(dest, team)
        each = [
            (node("DELETED", kid, f"K{i}", 1), node("CREATED", below(moved, kid), f"K{i}", 1))
            for i, kid in enumerate(kids)
        ]
        assert unordered(await sub.take(6 + 2 * LARGE + 1)) == unordered(
            [
                node("UPDATED", team, "Team", 1),  # locked
                node("UPDATED", root, "Root", 4),
                node("UPDATED", dest, "Dest", 2),
                node("DELETED", team, "Team", 1),
                node("CREATED", moved, "Team", 1),
                node("UPDATED", root, "Root", 4),  # its count of children, apart from its version
                *(event for pair in each for event in pair),
                node("UPDATED", moved, "Team", 1),  # unlocked
            ]
        )
        await sub.nothing_more()


async def test_a_resume_after_a_replayed_event_gets_it_not_again(
    connect: Connect, acme: Api, watch: ReaderWatch
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    a, b, c = line("A", 1, 100), line("B", 1, 200), line("C", 1, 300)
    orders = {"u": bob["id"]}
    async with subscribed(connect, acme, watch, "orderChanged", ORDERS, orders) as sub:
        first = await acme.create_order(bob["id"], [("A", 1, 100)])
        assert await sub.take(1) == [
            {"change": "CREATED", "order": order_view(first["id"], "PENDING", 1, a)}
        ]
        cursor = sub.cursors[-1]
    await watch.hold()
    second = await acme.create_order(bob["id"], [("B", 1, 200)])
    resumed = {**orders, "after": cursor}
    async with subscribed(
        connect, acme, watch, "orderChanged", ORDERS, resumed, caught_up=False
    ) as sub:
        # from the replay: the reader has not read it yet
        assert await sub.take(1) == [
            {"change": "CREATED", "order": order_view(second["id"], "PENDING", 1, b)}
        ]
        cursor = sub.cursors[-1]
    resumed = {**orders, "after": cursor}
    async with subscribed(
        connect, acme, watch, "orderChanged", ORDERS, resumed, caught_up=False
    ) as sub:
        watch.release()  # the reader reads B now: it is before the cursor, not sent again
        third = await acme.create_order(bob["id"], [("C", 1, 300)])
        assert await sub.take(1) == [
            {"change": "CREATED", "order": order_view(third["id"], "PENDING", 1, c)}
        ]
        await sub.nothing_more()

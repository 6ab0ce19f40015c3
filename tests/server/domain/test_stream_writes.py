"""Writes made outside a request reach the table's stream like any other: the items a
cleanup task removes in the background each leave a REMOVE record, decoded as their
entity's models. On both stores."""

from __future__ import annotations

import pytest

from generated.entities import ENTITIES, decode_change
from keygraph.cursor import CursorCodec
from keygraph.store import Session
from keygraph.stores import stream_of
from keygraph.streams import Position
from server.domain import cleanup, users
from tests.ids import local_id
from tests.keygraph.stores.test_store_streams import everything
from tests.server.conftest import World


async def test_a_cleanup_tasks_deletes_are_in_the_stream(
    world: World, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    acme = world.acme
    user = await acme.create_user("heavy@example.org")
    for n in range(60):  # more than one transaction takes
        await acme.create_order(user["id"], [(f"S{n}", 1, 1)])
    monkeypatch.setattr(cleanup, "INLINE_SECONDS", 0.0)
    monkeypatch.setattr(cleanup, "spawn", lambda s, task: None)  # left to the background
    session = Session(world.store, CursorCodec(b"k" * 32))
    user_id = local_id(user["id"], "User")
    assert await users.delete_user(session, "acme", user_id, 1) is False
    left = await world.partition(f"T#acme#USER#{user_id}")
    stream = stream_of(world.store)
    (shard,) = await stream.shards()
    before = (await everything(stream))[-1].sequence
    monkeypatch.undo()
    assert await cleanup.resume_all(session) == 1
    await cleanup.drain()
    batch = await stream.read(Position(shard.shard_id, before))
    changes = [decode_change(record) for record in batch.records]
    removed = {
        (c.keys["PK"], c.keys["SK"], c.entity)
        for c in changes
        if c is not None and c.event == "REMOVE"
    }
    partition = f"T#acme#USER#{user_id}"
    assert {r for r in removed if r[0] == partition} == {
        (item["PK"], item["SK"], ENTITIES[item["_type"]].name) for item in left
    }
    assert {r[2] for r in removed} == {"UserOrder", "Order", "CleanupTask"}

"""Typed stream decoding: a record of the table's stream read as its entity's models, old
and new image, by `_type`, with no server involved (a script reading the stream)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from generated.entities import decode_change
from generated.models.group import Group
from generated.table import TABLE
from keygraph.plan import Delete, Put
from keygraph.stores import stream_of
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.streams import StreamRecord
from tests.keygraph.stores.test_store_streams import everything

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def test_a_record_becomes_its_entitys_models(tmp_path: Path) -> None:
    store = EmbeddedStore(TABLE, path=tmp_path / "t.sqlite3")
    group = Group(group_id="g1", name="Ops", created_at=T0)
    renamed = group.model_copy(update={"name": "Operations", "version": 2})
    item = group.to_item("acme")
    await store.put(Put(item))
    await store.put(Put(renamed.to_item("acme")))
    await store.delete(Delete({"PK": item["PK"], "SK": item["SK"]}))
    await store.put(Put({"PK": "MIGRATION", "SK": "x"}))  # an item of no entity
    records = await everything(stream_of(store))
    changes = [decode_change(record) for record in records]
    assert changes[-1] is None
    decoded = [(c.event, c.entity, c.old, c.new) for c in changes[:-1] if c is not None]
    assert decoded == [
        ("INSERT", "Group", None, group),
        ("MODIFY", "Group", group, renamed),
        ("REMOVE", "Group", renamed, None),
    ]
    first = changes[0]
    assert first is not None
    assert isinstance(first.new, Group)
    assert first.new.name == "Ops"
    assert (first.sequence, first.at, first.keys) == (
        records[0].sequence,
        records[0].at,
        records[0].keys,
    )
    await store.close()


def test_a_record_without_images_names_no_entity() -> None:
    keys_only = StreamRecord(
        "1", "REMOVE", {"PK": "T#acme#GROUP#g1", "SK": "GROUP"}, None, None, T0
    )
    assert decode_change(keys_only) is None
    item = Group(group_id="g1", name="Ops", created_at=T0).to_item("acme")
    new_only = dataclasses.replace(keys_only, event="INSERT", new=item)
    change = decode_change(new_only)
    assert change is not None
    assert change.old is None
    assert change.new == Group(group_id="g1", name="Ops", created_at=T0)

"""The timeseries case compiled and run: write-sharded reads merged across shards, a sparse
index, item collections of two types, batch gets by composite key."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from types import ModuleType
from typing import Any

from keygraph.cursor import CursorCodec
from keygraph.store import Session
from tests.codegen.recording import Recording
from tests.conftest import StoreFactory

Importer = Callable[[str], ModuleType]

T0 = datetime(2025, 1, 1, tzinfo=UTC)


async def _seed(ts: Importer, store: Recording) -> list[Any]:
    event_cls = ts("models.event").Event
    enums = ts("models.enums")
    device = ts("models.device").Device(device_id="d1", site="lab", installed_at=T0)
    await store.add(device.to_item("acme"))
    events = []
    for n in range(40):
        event = event_cls(
            device_id=f"d{n % 3}",
            event_id=f"e{n:02d}",
            event_type=enums.EventEventType.READING if n % 4 else enums.EventEventType.BOOT,
            occurred_at=T0 + timedelta(minutes=(n * 7) % 40),
            shard=n % 10,
            alert_level=enums.EventAlertLevel.CRIT if n % 5 == 0 else None,
            readings=[{"name": "temp", "value": 20.5 + n}],
        )
        await store.add(event.to_item("acme"))
        await store.add(event.to_item("other"))
        events.append(event)
    return events


def _session(store: Recording) -> Session:
    return Session(store=store, cursors=CursorCodec(b"k" * 32))


async def test_sharded_pattern_fans_out_and_merges_pages(
    timeseries: Importer, store_factory: StoreFactory, kind: str
) -> None:
    store = Recording(await store_factory(kind, timeseries("table").TABLE), 3)
    events = await _seed(timeseries, store)
    queries = timeseries("queries.event")
    reading = timeseries("models.enums").EventEventType.READING
    s = _session(store)
    seen: list[str] = []
    after = None
    while True:
        page = await queries.events_by_type(s, "acme", reading, first=7, after=after)
        seen += [e.event_id for e in page.items]
        if page.cursor is None:
            break
        after = page.cursor
    wanted = sorted(
        (e for e in events if e.event_type == reading),
        key=lambda e: (e.occurred_at, e.event_id),
        reverse=True,
    )
    assert seen == [e.event_id for e in wanted]
    partitions = {q.partition for q in store.queries}
    assert len(partitions) == 10
    assert all(p.startswith("T#acme#EVTTYPE#READING#") for p in partitions)


async def test_sharded_pattern_with_a_sort_condition(
    timeseries: Importer, store_factory: StoreFactory, kind: str
) -> None:
    store = Recording(await store_factory(kind, timeseries("table").TABLE))
    events = await _seed(timeseries, store)
    boot = timeseries("models.enums").EventEventType.BOOT
    since = T0 + timedelta(minutes=20)
    page = await timeseries("queries.event").events_by_type_since(
        _session(store), "acme", boot, since, first=100
    )
    wanted = sorted(
        (e for e in events if e.event_type == boot and e.occurred_at >= since),
        key=lambda e: (e.occurred_at, e.event_id),
    )
    assert [e.event_id for e in page.items] == [e.event_id for e in wanted]
    assert page.cursor is None


async def test_sparse_index_holds_only_items_with_the_attribute(
    timeseries: Importer, store_factory: StoreFactory, kind: str
) -> None:
    store = Recording(await store_factory(kind, timeseries("table").TABLE))
    events = await _seed(timeseries, store)
    crit = timeseries("models.enums").EventAlertLevel.CRIT
    page = await timeseries("queries.event").alerts(_session(store), "acme", crit)
    assert sorted(e.event_id for e in page.items) == sorted(
        e.event_id for e in events if e.alert_level is not None
    )
    quiet = next(e for e in events if e.alert_level is None)
    assert "GSI2PK" not in quiet.to_item("acme")
    assert quiet.to_item("acme")["readings"][0]["value"] == Decimal(repr(20.5 + 1))


async def test_item_collection_returns_both_types(
    timeseries: Importer, store_factory: StoreFactory, kind: str
) -> None:
    store = Recording(await store_factory(kind, timeseries("table").TABLE))
    events = await _seed(timeseries, store)
    s = _session(store)
    page = await timeseries("queries.device").device_timeline(s, "acme", "d1", first=100)
    kinds = [type(x).__name__ for x in page.items]
    assert kinds.count("Device") == 1
    assert kinds.count("Event") == sum(1 for e in events if e.device_id == "d1")
    refs = [(e.device_id, e.occurred_at, e.event_id) for e in events[:3]]
    got = await timeseries("queries.event").get_events(s, "acme", [*refs, ("dx", T0, "ex")])
    assert [g.event_id if g else None for g in got] == ["e00", "e01", "e02", None]

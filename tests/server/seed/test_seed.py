"""Seed data: what it writes (read back through the generated patterns), idempotence,
determinism, and completing a run that was cut short."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from generated.models.enums import OrderStatus
from generated.queries.email_claim import get_email_claim
from generated.queries.membership import group_members
from generated.queries.order import orders_by_status
from generated.queries.org_node import org_children, org_subtree
from generated.queries.shop import get_shops
from generated.queries.user import list_users
from generated.queries.user_order import user_orders
from generated.table import TABLE
from keygraph.cursor import CursorCodec
from keygraph.page import Page
from keygraph.plan import Delete, Put, TableDef
from keygraph.store import Session, Store
from keygraph.stores.counting import CountingStore
from keygraph.stores.embedded.store import EmbeddedStore
from server.domain.emails import email_key
from server.domain.geo import haversine_km
from server.seed import data as seed_data
from server.seed.tenant import SeedSizes, build_items, level_sizes, seed

T = TypeVar("T")
SMALL = SeedSizes(users=6, orders=15, groups=3, org_nodes=13, org_depth=3, shops=40)
CODEC = CursorCodec(b"seed-tests-cursor-secret-0123456789")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    embedded = EmbeddedStore(TABLE, path=tmp_path / "seed.sqlite3")
    yield embedded
    await embedded.close()


async def drain(read: Callable[..., Awaitable[Page[T]]], *args: Any) -> list[T]:
    """Every item of a paged pattern."""
    items: list[T] = []
    after = None
    while True:
        page = await read(*args, first=100, after=after)
        items.extend(page.items)
        if page.cursor is None:
            return items
        after = page.cursor


async def test_seed_writes_every_kind_consistently(store: EmbeddedStore) -> None:
    report = await seed(store, "acme", SMALL, progress=False)
    assert not report.already_seeded
    written = report.written
    assert {k: written[k] for k in ("USER", "EMAIL", "ORDER", "USER_ORDER", "GROUP")} == {
        "USER": 6, "EMAIL": 6, "ORDER": 15, "USER_ORDER": 15, "GROUP": 3,
    }  # fmt: skip
    assert (written["ORG_NODE"], written["SHOP"]) == (13, 40)
    assert 3 <= written["MEMBER"] <= 3 * 6
    s = Session(store, CODEC)

    users = await drain(list_users, s, "acme")
    assert len(users) == 6
    for user in users:
        claim = await get_email_claim(s, "acme", email_key(user.email))
        assert claim is not None
        assert claim.user_id == user.user_id
    user_side = [o for u in users for o in await drain(user_orders, s, "acme", u.user_id)]
    by_status = [o for st in OrderStatus for o in await drain(orders_by_status, s, "acme", st)]
    assert len(user_side) == len(by_status) == 15
    assert {o.model_dump_json() for o in user_side} == {o.model_dump_json() for o in by_status}
    for order in by_status:
        assert 1 <= len(order.items) <= 5
        assert order.total_cents == sum(i.quantity * i.unit_price_cents for i in order.items)
        assert order.created_at >= next(u for u in users if u.user_id == order.user_id).created_at

    group_ids = {
        item["group_id"] for item in build_items("acme", SMALL, 0) if item["_type"] == "GROUP"
    }
    members = [m for g in group_ids for m in await drain(group_members, s, "acme", g)]
    assert len(members) == written["MEMBER"]

    roots = await drain(org_children, s, "acme", "ROOT")
    assert len(roots) == 1
    tree = await drain(org_subtree, s, "acme", roots[0].path)
    assert len(tree) == 12
    depths = Counter(len(node.path) - 1 for node in [roots[0], *tree])
    assert [depths[d] for d in range(3)] == level_sizes(13, 3)

    shop_ids = [
        item["shop_id"] for item in build_items("acme", SMALL, 0) if item["_type"] == "SHOP"
    ]
    shops = await get_shops(s, "acme", shop_ids)
    city = seed_data.BERLIN
    for shop in shops:
        assert shop is not None
        assert haversine_km(city.lat, city.lng, shop.lat, shop.lng) <= city.radius_km + 0.01


async def test_a_second_run_writes_nothing(store: EmbeddedStore) -> None:
    first = await seed(store, "acme", SMALL, progress=False)
    counting = CountingStore(store)
    again = await seed(counting, "acme", SMALL, progress=False)
    assert again.already_seeded
    assert again.written == {}
    assert counting.calls == 1  # one read of the marker
    assert first.tag == again.tag


async def test_other_tenants_and_sizes_are_seeded_separately(store: EmbeddedStore) -> None:
    await seed(store, "acme", SMALL, progress=False)
    other = await seed(store, "globex", SMALL, progress=False)
    assert not other.already_seeded
    bigger = SeedSizes(users=7, orders=15, groups=3, org_nodes=13, org_depth=3, shops=40)
    more = await seed(store, "acme", bigger, progress=False)
    assert not more.already_seeded
    s = Session(store, CODEC)
    assert len(await drain(list_users, s, "acme")) == 6 + 7
    assert len(await drain(list_users, s, "globex")) == 6


def test_the_same_seed_builds_the_same_items() -> None:
    assert build_items("acme", SMALL, 7) == build_items("acme", SMALL, 7)
    ids = {i.get("user_id") for i in build_items("acme", SMALL, 7) if i["_type"] == "USER"}
    other = {i.get("user_id") for i in build_items("acme", SMALL, 8) if i["_type"] == "USER"}
    assert len(ids) == 6
    assert not ids & other


async def test_seeded_stores_hold_the_same_data(tmp_path: Path) -> None:
    listings = []
    for name in ("one", "two"):
        embedded = EmbeddedStore(TABLE, path=tmp_path / f"{name}.sqlite3")
        await seed(embedded, "acme", SMALL, rng_seed=3, progress=False)
        listings.append(await drain(list_users, Session(embedded, CODEC), "acme"))
        await embedded.close()
    assert listings[0] == listings[1]


class FlakyStore(CountingStore):
    """Fails the batch_write numbered `fail_at` (from 1); the others go through."""

    def __init__(self, inner: Store, fail_at: int) -> None:
        super().__init__(inner)
        self.fail_at = fail_at
        self.batches = 0

    async def batch_write(self, actions: Sequence[Put | Delete]) -> None:
        self.batches += 1
        if self.batches == self.fail_at:
            raise ConnectionError("store went away")
        await super().batch_write(actions)


async def test_a_run_cut_short_is_completed_by_the_next(store: EmbeddedStore) -> None:
    with pytest.raises(ConnectionError):
        await seed(FlakyStore(store, fail_at=3), "acme", SMALL, progress=False)
    s = Session(store, CODEC)
    report = await seed(store, "acme", SMALL, progress=False)
    assert not report.already_seeded  # no marker: the first run did not finish
    assert report.total == len(build_items("acme", SMALL, 0))
    assert len(await drain(list_users, s, "acme")) == 6
    assert (await seed(store, "acme", SMALL, progress=False)).already_seeded


async def test_a_failed_batch_stops_the_other_writers(store: EmbeddedStore) -> None:
    sizes = SeedSizes(users=0, orders=0, groups=0, org_nodes=0, org_depth=0, shops=1000)
    flaky = FlakyStore(store, fail_at=3)
    with pytest.raises(ConnectionError):
        await seed(flaky, "acme", sizes, progress=False)
    batches = flaky.batches
    assert batches < 1000 // 25
    for _ in range(20):
        await asyncio.sleep(0)
    assert flaky.batches == batches  # no writer carries on in the background


@pytest.mark.parametrize(("nodes", "depth"), [(60, 4), (1000, 6), (5, 5), (7, 1), (2, 2), (100, 3)])
def test_level_sizes_fill_every_level(nodes: int, depth: int) -> None:
    sizes = level_sizes(nodes, depth)
    assert len(sizes) == depth
    assert sum(sizes) == nodes
    assert sizes[0] == 1 or depth == 1
    assert min(sizes) >= 1


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        SeedSizes(users=-1, orders=0, groups=0, org_nodes=0, org_depth=0, shops=0)
    with pytest.raises(ValueError, match="need users"):
        SeedSizes(users=0, orders=1, groups=0, org_nodes=0, org_depth=0, shops=0)
    with pytest.raises(ValueError, match="depth"):
        SeedSizes(users=0, orders=0, groups=0, org_nodes=3, org_depth=4, shops=0)


async def test_progress_bar_reports_the_tenant(
    store: EmbeddedStore, capsys: pytest.CaptureFixture[str]
) -> None:
    sizes = SeedSizes(users=1, orders=1, groups=0, org_nodes=0, org_depth=0, shops=0)
    await seed(store, "acme", sizes, progress=True)
    err = capsys.readouterr().err
    assert "seed acme" in err
    assert "4/4" in err  # user, claim, order, user-side copy


@pytest.mark.dynamodb_local
async def test_seed_on_dynamodb_local(
    store_factory: Callable[[str, TableDef], Awaitable[Store]],
) -> None:
    store = await store_factory("dynamodb-local", TABLE)
    report = await seed(store, "acme", SMALL, progress=False)
    assert report.total == len(build_items("acme", SMALL, 0))
    s = Session(store, CODEC)
    assert len(await drain(list_users, s, "acme")) == 6
    roots = await drain(org_children, s, "acme", "ROOT")
    assert len(await drain(org_subtree, s, "acme", roots[0].path)) == 12
    counting = CountingStore(store)
    assert (await seed(counting, "acme", SMALL, progress=False)).already_seeded
    assert counting.calls == 1

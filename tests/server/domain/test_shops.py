"""Shops: creating and reading one, and shopsNear against a brute-force haversine filter over
every shop, across the antimeridian and near the poles."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generated.table import TABLE
from keygraph.ids import new_id
from keygraph.plan import Put, TableDef
from keygraph.store import Store
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.domain import shops as shop_resolvers
from server.domain.geo import (
    FIRST_RING_KM,
    INLINE_MAX_CELLS,
    TARGET_CELLS,
    cover_circle,
    destination,
    haversine_km,
    next_ring,
    runs,
)
from server.domain.shops import shop_record
from server.settings import Settings
from tests.ids import from_global_id, to_global_id
from tests.server.conftest import app_of

NEAR = """query($lat: Float!, $lng: Float!, $r: Float!, $first: Int) {
  shopsNear(lat: $lat, lng: $lng, radiusKm: $r, first: $first) { distanceKm shop { id name } }
}"""
TENANTS = itertools.count()


class Shops:
    """The API as one tenant, with the store calls and waves of the last request as the
    dev-mode response reports them; shops can also be written straight into the store."""

    def __init__(
        self, client: httpx.AsyncClient, settings: Settings, store: Store, tenant: str
    ) -> None:
        self.client = client
        self.token = issue_token(settings, tenant, "tester", roles=["admin"])
        self.store = store
        self.tenant = tenant
        self.calls = 0
        self.waves = 0

    async def run(self, query: str, **variables: Any) -> tuple[dict[str, Any] | None, list[str]]:
        response = await self.client.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {self.token}"},
        )
        body: dict[str, Any] = response.json()
        self.calls = body.get("extensions", {}).get("storeCalls", 0)
        self.waves = body.get("extensions", {}).get("storeWaves", 0)
        codes = [error["extensions"]["code"] for error in body.get("errors", [])]
        return body.get("data"), codes

    async def data(self, query: str, **variables: Any) -> dict[str, Any]:
        data, codes = await self.run(query, **variables)
        assert not codes, codes
        assert data is not None
        return data

    async def add(self, positions: list[tuple[float, float]]) -> dict[str, tuple[float, float]]:
        """Writes shops at the positions directly; their global ids → stored positions."""
        now = datetime.now(UTC)
        records = [
            shop_record(new_id(), f"shop {i}", lat, lng, now)
            for i, (lat, lng) in enumerate(positions)
        ]
        for start in range(0, len(records), 25):
            chunk = records[start : start + 25]
            await self.store.batch_write([Put(r.to_item(self.tenant)) for r in chunk])
        return {to_global_id("Shop", r.shop_id): (r.lat, r.lng) for r in records}


@pytest.fixture
def acme(client: httpx.AsyncClient, settings: Settings, store: EmbeddedStore) -> Shops:
    return Shops(client, settings, store, "acme")


def brute_force(
    shops: dict[str, tuple[float, float]], lat: float, lng: float, radius: float, first: int
) -> list[tuple[str, float]]:
    """Every shop within the radius, nearest first, ties by shop id."""
    near = sorted(
        (haversine_km(lat, lng, slat, slng), from_global_id(shop_id)[1], shop_id)
        for shop_id, (slat, slng) in shops.items()
    )
    return [(shop_id, d) for d, _, shop_id in near if d <= radius][:first]


def queries(cells: Iterable[str]) -> int:
    """The Queries reading these cells: one a run of adjacent cells inside a geo_cell."""
    by_geo_cell: dict[str, list[str]] = {}
    for cell in cells:
        by_geo_cell.setdefault(cell[:3], []).append(cell)
    return sum(len(runs(sorted(group))) for group in by_geo_cell.values())


def covering_cells(lat: float, lng: float, radius: float, max_cells: int) -> list[str]:
    covering = cover_circle(lat, lng, radius, max_cells)
    return [cell for cells in covering.cells.values() for cell in cells]


ANYWHERE = st.tuples(st.floats(-80.0, 80.0), st.floats(-180.0, 180.0))
ANTIMERIDIAN = st.tuples(
    st.floats(-80.0, 80.0),
    st.one_of(st.floats(179.5, 180.0), st.floats(-180.0, -179.5), st.sampled_from([180.0, -180.0])),
)
POLES = st.tuples(
    st.one_of(st.floats(89.6, 90.0), st.floats(-90.0, -89.6)), st.floats(-180.0, 180.0)
)
OFFSETS = st.lists(st.tuples(st.floats(0.0, 360.0), st.floats(0.0, 1.6)), max_size=30)


@pytest.mark.parametrize(
    "cells", [INLINE_MAX_CELLS, TARGET_CELLS]
)  # the embedded store's, DynamoDB's
@given(
    center=st.one_of(ANYWHERE, ANTIMERIDIAN, POLES),
    radius=st.floats(0.01, 50.0),
    offsets=OFFSETS,
    first=st.one_of(st.none(), st.integers(0, 12)),
)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
async def test_shops_near_equals_a_brute_force_filter(
    client: httpx.AsyncClient,
    settings: Settings,
    store: EmbeddedStore,
    monkeypatch: pytest.MonkeyPatch,
    cells: int,
    center: tuple[float, float],
    radius: float,
    offsets: list[tuple[float, float]],
    first: int | None,
) -> None:
    monkeypatch.setattr(shop_resolvers, "INLINE_MAX_CELLS", cells)
    lat, lng = center
    api = Shops(client, settings, store, f"t{next(TENANTS)}")  # a fresh tenant: an empty map
    positions = [destination(lat, lng, bearing, radius * frac) for bearing, frac in offsets]
    shops = await api.add(positions)
    data = await api.data(NEAR, lat=lat, lng=lng, r=radius, first=first)
    got = [(hit["shop"]["id"], hit["distanceKm"]) for hit in data["shopsNear"]]
    assert got == brute_force(shops, lat, lng, radius, 20 if first is None else first)


async def test_an_inline_store_reads_the_cells_without_a_task_each(acme: Shops) -> None:
    berlin = (52.52, 13.405)
    await acme.add([destination(*berlin, bearing, 0.5) for bearing in range(0, 360, 30)])
    loop = asyncio.get_running_loop()
    tasks = 0

    def counted(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        nonlocal tasks
        tasks += 1
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.set_task_factory(counted)
    try:
        await acme.data(NEAR, lat=berlin[0], lng=berlin[1], r=1.0, first=100)
    finally:
        loop.set_task_factory(None)
    assert (acme.calls, acme.waves) == (queries(covering_cells(*berlin, 1.0, INLINE_MAX_CELLS)), 1)
    assert tasks < acme.calls


async def test_one_query_per_run_of_adjacent_cells_all_at_once(acme: Shops) -> None:
    berlin = (52.52, 13.405)
    await acme.add([destination(*berlin, bearing, 0.5) for bearing in range(0, 360, 30)])
    data = await acme.data(NEAR, lat=berlin[0], lng=berlin[1], r=1.0, first=100)
    assert len(data["shopsNear"]) == 12
    distances = [hit["distanceKm"] for hit in data["shopsNear"]]
    assert distances == sorted(distances)
    assert all(d == pytest.approx(0.5, abs=1e-4) for d in distances)  # positions kept to 1 cm
    cells = covering_cells(*berlin, 1.0, INLINE_MAX_CELLS)
    assert (acme.calls, acme.waves) == (queries(cells), 1)
    assert acme.calls <= len(cells) / 2  # this covering's cells lie in runs


async def test_a_dense_cell_is_read_page_by_page(
    acme: Shops, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shop_resolvers, "CELL_PAGE_SIZE", 2)
    shops = await acme.add([(10.0, 20.0)] * 5)
    data = await acme.data(NEAR, lat=10.0, lng=20.0, r=0.05)
    assert sorted(hit["shop"]["id"] for hit in data["shopsNear"]) == sorted(shops)
    # Every run of covering cells once, and the one holding the shops twice more (pages 2,
    # 2, 1).
    assert acme.calls == queries(covering_cells(10.0, 20.0, 0.05, INLINE_MAX_CELLS)) + 2


async def test_a_dense_centre_answers_from_the_first_ring_whatever_the_radius(
    acme: Shops,
) -> None:
    berlin = (52.52, 13.405)
    centre = [destination(*berlin, bearing, 0.3 + bearing / 1000) for bearing in range(0, 360, 24)]
    shops = await acme.add([*centre, destination(*berlin, 0.0, 30.0)])
    data = await acme.data(NEAR, lat=berlin[0], lng=berlin[1], r=50.0, first=10)
    got = [(hit["shop"]["id"], hit["distanceKm"]) for hit in data["shopsNear"]]
    assert got == brute_force(shops, *berlin, 50.0, 10)
    # Ten shops lie within the first ring, so nothing farther can be among the ten nearest.
    first_ring = covering_cells(*berlin, FIRST_RING_KM, INLINE_MAX_CELLS)
    assert (acme.calls, acme.waves) == (queries(first_ring), 1)


async def test_a_sparse_map_widens_the_circle_until_enough_are_found(acme: Shops) -> None:
    berlin = (52.52, 13.405)
    shops = await acme.add([destination(*berlin, bearing, 15.0) for bearing in (0, 120, 240)])
    shops |= await acme.add([destination(*berlin, 45.0, 45.0)])
    data = await acme.data(NEAR, lat=berlin[0], lng=berlin[1], r=50.0, first=4)
    got = [(hit["shop"]["id"], hit["distanceKm"]) for hit in data["shopsNear"]]
    assert got == brute_force(shops, *berlin, 50.0, 4)
    assert len(got) == 4
    assert acme.waves > 1  # the first ring holds none of them


async def test_a_wider_circle_reads_only_the_cells_not_read_yet(
    acme: Shops, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shop_resolvers, "INLINE_MAX_CELLS", TARGET_CELLS)
    berlin = (52.52, 13.405)
    shops = await acme.add([destination(*berlin, bearing, 4.6) for bearing in (0, 90, 180)])
    data = await acme.data(NEAR, lat=berlin[0], lng=berlin[1], r=5.0, first=3)
    assert [hit["shop"]["id"] for hit in data["shopsNear"]] == [
        shop_id for shop_id, _ in brute_force(shops, *berlin, 5.0, 3)
    ]
    # Circles of 2, 4 and 5 km, all covered by cells of one precision: each cell read once,
    # the new cells of each circle in runs.
    rings = [cover_circle(*berlin, radius) for radius in (2.0, 4.0, 5.0)]
    assert {ring.precision for ring in rings} == {rings[-1].precision}
    cells = [{c for cells in ring.cells.values() for c in cells} for ring in rings]
    read = queries(cells[0]) + queries(cells[1] - cells[0]) + queries(cells[2] - cells[1])
    assert (acme.calls, acme.waves) == (read, 3)


def test_coverings_are_finer_where_calls_never_wait(store: EmbeddedStore) -> None:
    class Remote:  # a store answering over a network says nothing of answering inline
        pass

    assert shop_resolvers.max_cells(store) == INLINE_MAX_CELLS > TARGET_CELLS
    assert shop_resolvers.max_cells(Remote()) == TARGET_CELLS  # type: ignore[arg-type]


def test_the_next_ring_follows_the_density_found() -> None:
    assert next_ring(2.0, 0, 50, 50.0) == 4.0  # none found: twice as wide
    assert next_ring(2.0, 40, 50, 50.0) == 4.0  # nearly enough: still twice
    # 2 found of 50: 5x the radius holds 25x the area, and a quarter more for the margin.
    assert next_ring(2.0, 2, 50, 50.0) == pytest.approx(12.5)
    assert next_ring(20.0, 1, 100, 50.0) == 50.0  # never past the radius


async def test_first_zero_reads_nothing(acme: Shops) -> None:
    await acme.add([(52.52, 13.405)])
    data = await acme.data(NEAR, lat=52.52, lng=13.405, r=5.0, first=0)
    assert data["shopsNear"] == []
    assert acme.calls == 0


async def test_create_and_read_a_shop(
    acme: Shops, client: httpx.AsyncClient, settings: Settings, store: EmbeddedStore
) -> None:
    data = await acme.data(
        'mutation { createShop(input: {name: "Späti", lat: -33.8688, lng: 151.2093}) '
        "{ id name lat lng } }"
    )
    created = data["createShop"]
    assert (created["name"], created["lat"], created["lng"]) == ("Späti", -33.8688, 151.2093)
    read = await acme.data(
        "query($id: ID!) { shop(id: $id) { id name lat lng } }", id=created["id"]
    )
    assert read["shop"] == created
    node = await acme.data(
        "query($id: ID!) { node(id: $id) { id ... on Shop { name } } }", id=created["id"]
    )
    assert node["node"] == {"id": created["id"], "name": "Späti"}
    wrong_type = to_global_id("OrgNode", from_global_id(created["id"])[1])
    assert (await acme.data("query($id: ID!) { shop(id: $id) { id } }", id=wrong_type)) == {
        "shop": None
    }
    near = await acme.data(NEAR, lat=-33.87, lng=151.21, r=1.0)
    assert [hit["shop"]["id"] for hit in near["shopsNear"]] == [created["id"]]
    other = Shops(client, settings, store, "globex")
    assert (await other.data("query($id: ID!) { shop(id: $id) { id } }", id=created["id"]))[
        "shop"
    ] is None
    assert (await other.data(NEAR, lat=-33.87, lng=151.21, r=1.0))["shopsNear"] == []


@pytest.mark.parametrize(
    "variables",
    [
        {"lat": 0.0, "lng": 0.0, "r": 0.0},
        {"lat": 0.0, "lng": 0.0, "r": -1.0},
        {"lat": 0.0, "lng": 0.0, "r": 50.001},
        {"lat": 90.5, "lng": 0.0, "r": 1.0},
        {"lat": 0.0, "lng": -180.5, "r": 1.0},
        {"lat": 0.0, "lng": 0.0, "r": 1.0, "first": -1},
    ],
)
async def test_bad_arguments_are_bad_user_input(acme: Shops, variables: dict[str, Any]) -> None:
    data, codes = await acme.run(NEAR, **variables)
    # refused at the field, which is nullable (a caller may be refused it)
    assert data == {"shopsNear": None}
    assert codes == ["BAD_USER_INPUT"]
    assert acme.calls == 0


async def test_first_over_the_largest_page_is_bad_user_input(acme: Shops) -> None:
    """Refused at the field, as its page's largest size (docs/contract.md)."""
    data, codes = await acme.run(NEAR, lat=0.0, lng=0.0, r=1.0, first=101)
    assert data == {"shopsNear": None}
    assert codes == ["BAD_USER_INPUT"]
    assert acme.calls == 0


async def test_create_refuses_a_position_off_the_globe(acme: Shops) -> None:
    _, codes = await acme.run('mutation { createShop(input: {name: "x", lat: 91, lng: 0}) { id } }')
    assert len(codes) == 1  # the bad shop answered: its field fails
    assert acme.calls == 0


async def test_positions_are_kept_to_a_centimetre(acme: Shops) -> None:
    data = await acme.data(
        'mutation { createShop(input: {name: "x", lat: 1e-140, lng: 13.123456789}) { lat lng } }'
    )
    assert data["createShop"] == {"lat": 0.0, "lng": 13.1234568}


@pytest.mark.dynamodb_local
async def test_shops_near_on_dynamodb_local(
    store_factory: Callable[[str, TableDef], Awaitable[Store]], settings: Settings
) -> None:
    store = await store_factory("dynamodb-local", TABLE)
    transport = httpx.ASGITransport(app=app_of(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        api = Shops(client, settings, store, "acme")
        center = (-16.5, 179.9)  # Fiji, across the antimeridian
        positions = [destination(*center, bearing, 12.0) for bearing in range(0, 360, 20)]
        shops = await api.add([*positions, destination(*center, 90.0, 30.0)])
        data = await api.data(NEAR, lat=center[0], lng=center[1], r=20.0, first=100)
        got = [(hit["shop"]["id"], hit["distanceKm"]) for hit in data["shopsNear"]]
        assert got == brute_force(shops, *center, 20.0, 100)
        assert len(got) == len(positions)
        created = await api.data(
            'mutation { createShop(input: {name: "Nadi", lat: -17.7765, lng: 177.435}) { id } }'
        )
        read = await api.data(
            "query($id: ID!) { shop(id: $id) { lat lng } }", id=created["createShop"]["id"]
        )
        assert read["shop"] == {"lat": -17.7765, "lng": 177.435}


async def test_a_bad_shop_not_answered_does_not_fail_the_answer(acme: Shops) -> None:
    """Only the shops answered become models: one stored with a value its model refuses,
    read with its cell but not among the nearest, leaves the answer whole."""
    berlin = (52.52, 13.405)
    good = await acme.add([destination(*berlin, 0.0, 0.1)])
    far = shop_record(new_id(), "far", *destination(*berlin, 90.0, 0.4), datetime.now(UTC))
    await acme.store.put(Put({**far.to_item(acme.tenant), "name": ""}))
    data = await acme.data(NEAR, lat=berlin[0], lng=berlin[1], r=1.0, first=1)
    assert [hit["shop"]["id"] for hit in data["shopsNear"]] == list(good)
    _, codes = await acme.run(NEAR, lat=berlin[0], lng=berlin[1], r=1.0, first=2)
    assert len(codes) == 1  # the bad shop answered: its field fails

"""Shops: a name at a position, created, moved and deleted with its geohash keys, and the
shops nearest a point (S1), read in widening circles of geohash cells."""

from __future__ import annotations

import asyncio
import math
from contextlib import nullcontext
from datetime import UTC, datetime

from generated import authz
from generated.keys import shop as shop_keys
from generated.models.shop import Shop as ShopRecord
from generated.queries.shop import SHOPS_IN_CELL_PAGE, get_shop, plan_shops_in_cell
from generated.table import TABLE
from keygraph.errors import Forbidden
from keygraph.ids import new_id
from keygraph.paging import PageSize, collect_all
from keygraph.plan import Condition, Delete, Item, Put, WriteAction
from keygraph.store import Session, Store
from server.domain.geo import (
    FIRST_RING_KM,
    GEO_CELL_LENGTH,
    INLINE_MAX_CELLS,
    MAX_RADIUS_KM,
    RUN_END,
    TARGET_CELLS,
    cover_circle,
    distances_from,
    next_ring,
    runs,
    shop_geohash,
)
from server.domain.tx import stale, transact, version_is
from server.errors import BadUserInput, NotFound

SHOPS_NEAR_PAGE = PageSize(20, 100)
"""How many shops `shopsNear` returns when `first` is left out, and at most."""
POSITION_DECIMALS = 7
CELL_PAGE_SIZE = SHOPS_IN_CELL_PAGE.maximum
"""The pattern's largest page: a dense cell costs as few round trips as it can."""


def check_position(lat: float, lng: float) -> None:
    if not (math.isfinite(lat) and -90.0 <= lat <= 90.0):
        raise BadUserInput(f"lat must be between -90 and 90, got {lat}", field="lat")
    if not (math.isfinite(lng) and -180.0 <= lng <= 180.0):
        raise BadUserInput(f"lng must be between -180 and 180, got {lng}", field="lng")


def max_cells(store: Store) -> int:
    """How many cells a covering may have on this store: more, and smaller, where calls never
    wait (geo.INLINE_MAX_CELLS)."""
    return INLINE_MAX_CELLS if getattr(store, "answers_inline", False) else TARGET_CELLS


Spot = tuple[float, float, str, str, Item]
"""A shop as read, before its model is made: (lat, lng, shop id, geohash, stored item)."""


async def _within(
    s: Session,
    tenant: str,
    lat: float,
    lng: float,
    radius_km: float,
    read: dict[str, list[Spot]],
) -> list[tuple[float, str, Item]]:
    """Every shop within radius_km, as (distance, id, item), nearest first (ties by id): the
    cells covering the circle read concurrently, one Query a run of adjacent cells (more
    only when a run holds more than a page), then the exact haversine distance filters and
    orders. `read` holds the shops of cells read for a smaller circle: a cell inside one of
    them is not read again."""
    covering = cover_circle(lat, lng, radius_km, max_cells(s.store))
    cells = [
        (geo_cell, prefix) for geo_cell, prefixes in covering.cells.items() for prefix in prefixes
    ]
    known = {prefix: _known(read, prefix) for _, prefix in cells}
    wanted = [(geo_cell, prefix) for geo_cell, prefix in cells if known[prefix] is None]
    batches = await _read_cells(s, tenant, wanted)
    read.update((prefix, batch) for (_, prefix), batch in zip(wanted, batches, strict=True))
    near: list[tuple[float, str, Item]] = []
    distance_to = distances_from(lat, lng)
    for _, prefix in cells:
        spots = known[prefix]
        for shop_lat, shop_lng, shop_id, _, item in read[prefix] if spots is None else spots:
            distance = distance_to(shop_lat, shop_lng)
            if distance <= radius_km:
                near.append((distance, shop_id, item))
    near.sort(key=lambda entry: (entry[0], entry[1]))
    return near


async def _read_cells(s: Session, tenant: str, cells: list[tuple[str, str]]) -> list[list[Spot]]:
    """The shops of each (geo_cell, prefix): one Query a run of adjacent cells (more only
    where a run holds more than a page), sent together. A store that answers inline reads
    them together (the embedded store in one statement), as one wave where the store counts
    waves (`one_wave`, keygraph/stores/counting.py)."""
    if s.caller is not None and not authz.may_run_shops_in_cell(s.caller):
        raise Forbidden("shops_in_cell")
    by_geo_cell: dict[str, list[str]] = {}
    for geo_cell, prefix in cells:
        by_geo_cell.setdefault(geo_cell, []).append(prefix)
    read = [
        (geo_cell, run)
        for geo_cell, prefixes in by_geo_cell.items()
        for run in runs(sorted(prefixes))
    ]
    plans = [
        plan_shops_in_cell(tenant, geo_cell, run[0], run[-1] + RUN_END, limit=CELL_PAGE_SIZE)
        for geo_cell, run in read
    ]
    inline = getattr(s.store, "answers_inline", False)
    one_wave = getattr(s.store, "one_wave", None) if inline else None
    with one_wave() if one_wave is not None else nullcontext():
        pages = await collect_all(s, plans)
    if inline:
        await asyncio.sleep(0)  # the wave ends as the event loop turns: a wider circle's is next
    spots: dict[str, list[Spot]] = {}
    for (_, run), items in zip(read, pages, strict=True):
        spots.update((prefix, []) for prefix in run)
        length = len(run[0])
        for item in items:
            if item.get("_type") == ShopRecord.TYPE:
                geohash = item["geohash"]
                # SHOP_FLOATS: the plan has the store answer lat and lng as floats
                spot = (item["lat"], item["lng"], item["shop_id"], geohash, item)
                spots[geohash[:length]].append(spot)
    return [spots[prefix] for _, prefix in cells]


def _known(read: dict[str, list[Spot]], prefix: str) -> list[Spot] | None:
    """The shops of cell `prefix` if a cell holding it has been read, else None."""
    for length in range(len(prefix), 0, -1):
        spots = read.get(prefix[:length])
        if spots is not None:
            return [spot for spot in spots if spot[3].startswith(prefix)]
    return None


async def shops_near(
    s: Session, tenant: str, lat: float, lng: float, radius_km: float, first: int
) -> list[tuple[float, ShopRecord]]:
    """The `first` shops nearest the point within radius_km, with their distances, nearest
    first (ties by id).

    Read in widening circles, from FIRST_RING_KM out to the radius. Once a circle holds
    `first` shops, the nearest `first` of all are among them, since every shop outside it is
    farther: a dense area answers from a small circle in one wave, however large the radius.
    A wider circle reads only the cells that no smaller one has read. Only the shops
    answered become models (and are validated): a cell's others only give their position.
    """
    if first == 0:
        return []
    read: dict[str, list[Spot]] = {}
    ring = min(radius_km, FIRST_RING_KM)
    near = await _within(s, tenant, lat, lng, ring, read)
    while len(near) < first and ring < radius_km:
        ring = next_ring(ring, len(near), first, radius_km)
        near = await _within(s, tenant, lat, lng, ring, read)
    return [(distance, ShopRecord.from_item(item)) for distance, _, item in near[:first]]


def shop_record(
    shop_id: str, name: str, lat: float, lng: float, created_at: datetime
) -> ShopRecord:
    """A shop record with its geohash and geo_cell; pydantic checks the fields. Positions
    are kept to 1e-7 degrees (about 1 cm), which also keeps them in the range of numbers
    DynamoDB can store (a latitude of 1e-140 is not)."""
    lat, lng = round(lat, POSITION_DECIMALS), round(lng, POSITION_DECIMALS)
    geohash = shop_geohash(lat, lng)
    return ShopRecord(
        shop_id=shop_id,
        name=name,
        lat=lat,
        lng=lng,
        geohash=geohash,
        geo_cell=geohash[:GEO_CELL_LENGTH],
        created_at=created_at,
        version=1,
    )


def check_query(lat: float, lng: float, radius_km: float, first: int | None) -> int:
    """The number of shops to return; BadUserInput for a position, radius or count out of
    range."""
    check_position(lat, lng)
    if not (math.isfinite(radius_km) and 0.0 < radius_km <= MAX_RADIUS_KM):
        raise BadUserInput(
            f"radiusKm must be greater than 0 and at most {MAX_RADIUS_KM:g}", field="radiusKm"
        )
    limit = SHOPS_NEAR_PAGE.default if first is None else first
    if not 0 <= limit <= SHOPS_NEAR_PAGE.maximum:
        raise BadUserInput(f"first must be between 0 and {SHOPS_NEAR_PAGE.maximum}", field="first")
    return limit


async def create_shop(s: Session, tenant: str, name: str, lat: float, lng: float) -> ShopRecord:
    """A new shop at a position."""
    check_position(lat, lng)
    record = shop_record(new_id(), name, lat, lng, datetime.now(UTC))
    await s.store.put(
        Put(record.to_item(tenant), conditions=(Condition("not_exists", TABLE.partition_key),))
    )
    return record


async def _current_shop(s: Session, tenant: str, shop_id: str, expected: int) -> ShopRecord:
    current = await get_shop(s, tenant, shop_id, consistent=True)
    if current is None:
        raise NotFound("no such shop")
    if current.version != expected:
        raise stale("shop", current.version, expected)
    return current


async def move_shop(
    s: Session, tenant: str, shop_id: str, expected_version: int, lat: float, lng: float
) -> ShopRecord:
    """Move a shop: its position and geohash keys change in one conditional write, so the
    shop is found near its old position or its new one, never both or neither."""
    check_position(lat, lng)
    current = await _current_shop(s, tenant, shop_id, expected_version)
    moved = shop_record(shop_id, current.name, lat, lng, current.created_at)
    moved = moved.model_copy(update={"version": current.version + 1})
    await _write_if(s, Put(moved.to_item(tenant), version_is(expected_version)), current)
    return moved


async def delete_shop(s: Session, tenant: str, shop_id: str, expected_version: int) -> None:
    current = await _current_shop(s, tenant, shop_id, expected_version)
    await _write_if(
        s, Delete(shop_keys.key(tenant, shop_id), version_is(expected_version)), current
    )


async def _write_if(s: Session, action: WriteAction, current: ShopRecord) -> None:
    """One conditional write; CONFLICT when the shop changed since `current` was read."""
    await transact(s.store, [action], {0: stale("shop", current.version + 1, current.version)})

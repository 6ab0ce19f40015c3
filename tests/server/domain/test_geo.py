"""The haversine distance and the geohash covering of a circle."""

from __future__ import annotations

import itertools
import math

import pygeohash
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from server.domain.geo import (
    EARTH_RADIUS_KM,
    MAX_PRECISION,
    MIN_PRECISION,
    RUN_END,
    SHOP_PRECISION,
    TARGET_CELLS,
    Box,
    CellFloors,
    cell_count,
    cell_name,
    circle_box,
    cover_circle,
    destination,
    floor_km,
    grid_cells,
    haversine_km,
    runs,
    shop_geohash,
)

ANY_CENTER = st.tuples(st.floats(-90.0, 90.0), st.floats(-180.0, 180.0))
POLAR_CENTER = st.tuples(
    st.one_of(st.floats(89.0, 90.0), st.floats(-90.0, -89.0)), st.floats(-180.0, 180.0)
)
ANTIMERIDIAN_CENTER = st.tuples(
    st.floats(-89.0, 89.0), st.one_of(st.floats(179.0, 180.0), st.floats(-180.0, -179.0))
)
GEO_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


def test_haversine_known_distances() -> None:
    # One degree of arc along a great circle is R * pi / 180.
    one_degree = EARTH_RADIUS_KM * math.pi / 180
    assert haversine_km(0, 0, 0, 1) == pytest.approx(one_degree, rel=1e-12)
    assert haversine_km(10, 20, 11, 20) == pytest.approx(one_degree, rel=1e-12)
    # Pole to pole is half the circumference, across the antimeridian too.
    assert haversine_km(90, 0, -90, 0) == pytest.approx(EARTH_RADIUS_KM * math.pi, rel=1e-12)
    assert haversine_km(0, 179.5, 0, -179.5) == pytest.approx(one_degree, rel=1e-12)
    # Berlin (52.52, 13.405) to Paris (48.8566, 2.3522): about 878 km on this sphere.
    assert haversine_km(52.52, 13.405, 48.8566, 2.3522) == pytest.approx(877.5, abs=1.0)
    assert haversine_km(52.52, 13.405, 52.52, 13.405) == 0.0


@given(st.floats(-89.0, 89.0), st.floats(-180.0, 180.0), st.floats(0.0, 360.0), st.floats(0, 50))
@GEO_SETTINGS
def test_destination_lies_at_the_distance(
    lat: float, lng: float, bearing: float, km: float
) -> None:
    plat, plng = destination(lat, lng, bearing, km)
    assert -180.0 <= plng <= 180.0
    assert haversine_km(lat, lng, plat, plng) == pytest.approx(km, abs=1e-6)


def test_circle_box_splits_at_the_antimeridian() -> None:
    box = circle_box(0.0, 179.9, 50.0)
    assert len(box.lng_ranges) == 2
    (west, east_edge), (west_edge, east) = box.lng_ranges
    assert east_edge == 180.0
    assert west_edge == -180.0
    assert 179.4 < west < 179.9
    assert -180.0 < east < -179.5


def test_circle_box_containing_a_pole_covers_every_longitude() -> None:
    box = circle_box(89.9, 45.0, 20.0)
    assert box.max_lat == 90.0
    assert box.lng_ranges == ((-180.0, 180.0),)
    box = circle_box(-89.9, 45.0, 20.0)
    assert box.min_lat == -90.0
    assert box.lng_ranges == ((-180.0, 180.0),)


def test_precision_follows_the_radius() -> None:
    small = cover_circle(52.52, 13.405, 0.1)
    large = cover_circle(52.52, 13.405, 50.0)
    assert small.precision > large.precision == MIN_PRECISION
    assert len(small) <= TARGET_CELLS
    for geo_cell, prefixes in small.cells.items():
        assert all(p.startswith(geo_cell) and len(p) == small.precision for p in prefixes)


def test_more_cells_cover_more_tightly() -> None:
    coarse = cover_circle(52.52, 13.405, 2.0)
    fine = cover_circle(52.52, 13.405, 2.0, 64)
    assert fine.precision > coarse.precision
    assert TARGET_CELLS < len(fine) <= 64
    for geo_cell, prefixes in fine.cells.items():  # each fine cell lies inside a coarse one
        assert all(any(p.startswith(c) for c in coarse.cells[geo_cell]) for p in prefixes)


@pytest.mark.parametrize("radius", [0.0, -1.0, 50.0001, math.inf, math.nan])
def test_radius_out_of_range_is_refused(radius: float) -> None:
    with pytest.raises(ValueError, match="radius"):
        cover_circle(0.0, 0.0, radius)


@given(
    st.floats(-80.0, 80.0),
    st.floats(-179.0, 179.0),
    st.floats(0.01, 20.0),
    st.floats(0.01, 20.0),
    st.integers(MIN_PRECISION, MAX_PRECISION - 2),
)
@GEO_SETTINGS
def test_cells_in_box_include_pygeohash_enumeration(
    lat: float, lng: float, height: float, width: float, precision: int
) -> None:
    # pygeohash counts a cell that only touches the box's edge; ours do not (a point on a
    # shared edge belongs to one cell), so ours lie between its answers for the box shrunk
    # by a hair and for the box itself.
    east = min(180.0, lng + width / 10)
    box = Box(lat, lat + height / 10, ((lng, east),))
    assume(cell_count(box, precision) <= 300)
    rows, cols = grid_cells(box, precision)
    ours = {cell_name(row, col, precision) for row in rows for col in cols}
    assert len(ours) == cell_count(box, precision)
    hair = 1e-7
    inner = pygeohash.BoundingBox(lat + hair, lng + hair, box.max_lat - hair, east - hair)
    outer = pygeohash.BoundingBox(lat, lng, box.max_lat, east)
    assert set(pygeohash.geohashes_in_box(inner, precision)) <= ours
    assert ours <= set(pygeohash.geohashes_in_box(outer, precision))


def assert_covered(lat: float, lng: float, radius: float, bearing: float, frac: float) -> None:
    covering = cover_circle(lat, lng, radius)
    plat, plng = destination(lat, lng, bearing, radius * frac)
    assume(haversine_km(lat, lng, plat, plng) <= radius)
    cell = shop_geohash(plat, plng)[: covering.precision]
    assert cell in covering.cells.get(cell[:3], [])


@given(
    st.floats(-85.0, 85.0),
    st.floats(-180.0, 180.0),
    st.floats(0.05, 50.0),
    st.floats(0.0, 360.0),
    st.floats(0.0, 1.0),
)
@GEO_SETTINGS
def test_covering_holds_every_point_within_the_radius(
    lat: float, lng: float, radius: float, bearing: float, frac: float
) -> None:
    assert_covered(lat, lng, radius, bearing, frac)


@given(
    st.floats(-85.0, 85.0),
    st.one_of(st.floats(179.0, 180.0), st.floats(-180.0, -179.0)),
    st.floats(0.05, 50.0),
    st.floats(0.0, 360.0),
    st.floats(0.9, 1.0),
)
@GEO_SETTINGS
def test_covering_holds_points_across_the_antimeridian(
    lat: float, lng: float, radius: float, bearing: float, frac: float
) -> None:
    assert_covered(lat, lng, radius, bearing, frac)


@given(
    st.one_of(st.floats(89.5, 90.0), st.floats(-90.0, -89.5)),
    st.floats(-180.0, 180.0),
    st.floats(0.05, 50.0),
    st.floats(0.0, 360.0),
    st.floats(0.0, 1.0),
)
@GEO_SETTINGS
def test_covering_holds_points_near_the_poles(
    lat: float, lng: float, radius: float, bearing: float, frac: float
) -> None:
    assert_covered(lat, lng, radius, bearing, frac)


@given(
    st.one_of(ANY_CENTER, POLAR_CENTER, ANTIMERIDIAN_CENTER),
    st.floats(0.0, 360.0),
    st.floats(0.0, 200.0),
    st.integers(MIN_PRECISION, MAX_PRECISION),
)
@GEO_SETTINGS
def test_distance_floor_never_exceeds_a_real_distance(
    center: tuple[float, float], bearing: float, km: float, precision: int
) -> None:
    lat, lng = center
    plat, plng = destination(lat, lng, bearing, km)
    (row,), (col,) = grid_cells(Box(plat, plat, ((plng, plng),)), precision)  # the point's cell
    floors = CellFloors(lat, lng, precision)
    assert (
        floor_km(floors.row(row), floors.column(col)) <= haversine_km(lat, lng, plat, plng) + 1e-9
    )


@given(
    st.integers(1, SHOP_PRECISION),
    st.floats(0.0, 1.0, exclude_max=True),
    st.floats(0.0, 1.0, exclude_max=True),
)
@GEO_SETTINGS
def test_a_cell_is_named_by_the_geohash_of_its_centre(
    precision: int, down: float, across: float
) -> None:
    rows, cols = 1 << (5 * precision // 2), 1 << ((5 * precision + 1) // 2)
    row, col = int(down * rows), int(across * cols)
    centre = (-90.0 + (row + 0.5) * 180.0 / rows, -180.0 + (col + 0.5) * 360.0 / cols)
    assert cell_name(row, col, precision) == pygeohash.encode(*centre, precision)


def test_cells_the_circle_cannot_reach_are_left_out() -> None:
    lat, lng, radius = 52.52, 13.405, 1.0
    covering = cover_circle(lat, lng, radius)
    rows, cols = grid_cells(circle_box(lat, lng, radius), covering.precision)
    floors = CellFloors(lat, lng, covering.precision)
    box_cells = {
        cell_name(row, col, covering.precision): floor_km(floors.row(row), floors.column(col))
        for row in rows
        for col in cols
    }
    kept = {cell for cells in covering.cells.values() for cell in cells}
    assert kept < set(box_cells)
    for cell in set(box_cells) - kept:
        assert box_cells[cell] > radius
    (row,), (col,) = grid_cells(Box(lat, lat, ((lng, lng),)), 5)
    assert cell_name(row, col, 5) == shop_geohash(lat, lng)[:5]
    floors = CellFloors(lat, lng, 5)
    assert floor_km(floors.row(row), floors.column(col)) == 0.0


BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz"


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 2).flatmap(
        lambda extra: st.sets(st.text(BASE32[:4] + BASE32[-4:], min_size=extra, max_size=extra))
    ),
    st.lists(st.text(BASE32, min_size=SHOP_PRECISION - 3, max_size=SHOP_PRECISION - 3)),
    st.lists(st.tuples(st.integers(0, 40), st.text(BASE32, min_size=6, max_size=6))),
)
def test_a_run_of_cells_is_the_range_of_the_sort_keys_in_its_cells(
    tails: set[str], shops: list[str], near: list[tuple[int, str]]
) -> None:
    cells = sorted("u33" + tail for tail in tails)
    found = runs(cells)
    assert [cell for run in found for cell in run] == cells
    # each sort key (geohash#id) is inside one run's range exactly when it is in one of its
    # cells; keys next to the cells (their neighbours' geohashes) are tried too
    geohashes = ["u33" + shop for shop in shops]
    geohashes += [(cells[at % len(cells)] + tail)[:SHOP_PRECISION] for at, tail in near if cells]
    for geohash in geohashes:
        key = geohash + "#shop-1"
        inside = [run for run in found if run[0] <= key <= run[-1] + RUN_END]
        assert len(inside) == any(geohash.startswith(cell) for cell in cells)
        assert all(any(geohash.startswith(cell) for cell in run) for run in inside)
    for run, after in itertools.pairwise(found):  # runs are as long as they can be
        assert number(after[0]) != number(run[-1]) + 1


def number(cell: str) -> int:
    return int("".join(f"{BASE32.index(digit):05b}" for digit in cell), 2)


def test_adjacent_cells_carry_across_digits() -> None:
    assert runs(["u33dz", "u33e0", "u33e1", "u33e3"]) == [["u33dz", "u33e0", "u33e1"], ["u33e3"]]
    assert runs([]) == []

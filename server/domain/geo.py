"""Great-circle distance and the geohash cells that cover a circle on the Earth.

Shops sit in GSI2 under their geohash's first 3 characters (the `geo_cell` partition) and
sort by their full geohash, so the shops inside one geohash cell of precision p ≥ 3 are one
range of sort keys: partition = its first 3 characters, keys starting with the cell. Cells
adjacent in geohash order are one range too, and one Query (`runs`). `cover_circle` picks the
cells whose union contains every point within the radius, correct across the antimeridian
(the longitude range is split in two) and near the poles (a circle containing a pole covers
every longitude).

Cells are enumerated on the geohash grid by index: at precision p the grid has
2 ** (5p // 2) rows of latitude and 2 ** ((5p + 1) // 2) columns of longitude. A cell's
geohash is its column's and row's bits interleaved (`cell_name`); the box is padded by a hair
so that a point on a cell edge, wherever the encoder puts it, is covered. Cells of the box
that the circle cannot reach (its corners, mostly) are then dropped, by a lower bound of the
distance to each cell (`CellFloors`).

The nearest shops are searched in widening circles: `next_ring` sizes each from the density
the one before found (server/domain/shops.py reads them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pygeohash

EARTH_RADIUS_KM = 6371.0088
"""The mean Earth radius (IUGG), as the distance filter and the covering both use it."""

MAX_RADIUS_KM = 50.0
MIN_PRECISION = 3
MAX_PRECISION = 7
TARGET_CELLS = 16
"""The most cells a covering has by default."""
INLINE_MAX_CELLS = 64
"""The most cells a covering has on a store whose calls never wait (the embedded store): a
call there costs little beyond the items it reads, so smaller cells, which hold fewer points
outside the circle, are cheaper. Over a network every call is a round trip and a minimum
read charge, and coverings keep to TARGET_CELLS."""
SHOP_PRECISION = 9
GEO_CELL_LENGTH = 3

FIRST_RING_KM = 2.0
"""The radius of the first circle read when the asked-for radius is larger. In a city it
holds a few hundred shops, so one wave usually finds enough."""
MIN_GROWTH = 2.0
"""A wider circle is at least this many times as wide, so a sparse map takes few waves."""
DENSITY_MARGIN = 1.25
"""How much wider than the density found suggests a wider circle is drawn."""

_PAD_DEGREES = 1e-9
"""Widens the box beyond rounding error (1e-9 degrees is about 0.1 mm)."""


def haversine_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """The great-circle distance in km between two points given in degrees."""
    return distances_from(lat1, lng1)(lat2, lng2)


def distances_from(lat: float, lng: float) -> Callable[[float, float], float]:
    """haversine_km from one point to others, the point's own terms worked out once."""
    phi1 = math.radians(lat)
    cos_phi1 = math.cos(phi1)
    sin, cos, radians = math.sin, math.cos, math.radians

    def distance(lat2: float, lng2: float) -> float:
        phi2 = radians(lat2)
        h = sin((phi2 - phi1) / 2) ** 2 + cos_phi1 * cos(phi2) * sin(radians(lng2 - lng) / 2) ** 2
        return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))

    return distance


def destination(lat: float, lng: float, bearing_deg: float, km: float) -> tuple[float, float]:
    """The point km away from (lat, lng) along an initial bearing (degrees from north)."""
    delta = km / EARTH_RADIUS_KM
    phi, lmb, theta = math.radians(lat), math.radians(lng), math.radians(bearing_deg)
    phi2 = math.asin(
        math.sin(phi) * math.cos(delta) + math.cos(phi) * math.sin(delta) * math.cos(theta)
    )
    lmb2 = lmb + math.atan2(
        math.sin(theta) * math.sin(delta) * math.cos(phi),
        math.cos(delta) - math.sin(phi) * math.sin(phi2),
    )
    lng2 = (math.degrees(lmb2) + 540.0) % 360.0 - 180.0
    return max(-90.0, min(90.0, math.degrees(phi2))), lng2


def shop_geohash(lat: float, lng: float) -> str:
    """A shop's geohash: 9 characters (about 5 m)."""
    return str(pygeohash.encode(lat, lng, SHOP_PRECISION))


@dataclass(frozen=True, slots=True)
class Box:
    """A latitude band and one or two longitude ranges (two when it crosses 180°)."""

    min_lat: float
    max_lat: float
    lng_ranges: tuple[tuple[float, float], ...]


@dataclass(frozen=True, slots=True)
class Covering:
    """Cells of one precision covering a circle, grouped by their 3-character geo_cell."""

    precision: int
    cells: dict[str, list[str]]
    """geo_cell → the cells (prefixes to begins_with on) inside it, sorted."""

    def __len__(self) -> int:
        return sum(len(prefixes) for prefixes in self.cells.values())


def circle_box(lat: float, lng: float, radius_km: float) -> Box:
    """The smallest latitude/longitude box holding every point within radius_km.

    The latitude band is lat ± the angular radius. Away from the poles the longitude
    half-width is asin(sin δ / cos φ), the meridians tangent to the circle; when the band
    reaches a pole the circle contains it and every longitude is covered.
    """
    delta = math.degrees(radius_km / EARTH_RADIUS_KM) + _PAD_DEGREES
    min_lat, max_lat = lat - delta, lat + delta
    if min_lat <= -90.0 or max_lat >= 90.0:
        return Box(max(min_lat, -90.0), min(max_lat, 90.0), ((-180.0, 180.0),))
    ratio = math.sin(math.radians(delta)) / math.cos(math.radians(lat))
    if ratio >= 1.0:
        return Box(min_lat, max_lat, ((-180.0, 180.0),))
    half = math.degrees(math.asin(ratio)) + _PAD_DEGREES
    west, east = lng - half, lng + half
    if west < -180.0:
        return Box(min_lat, max_lat, ((west + 360.0, 180.0), (-180.0, east)))
    if east > 180.0:
        return Box(min_lat, max_lat, ((west, 180.0), (-180.0, east - 360.0)))
    return Box(min_lat, max_lat, ((west, east),))


def _grid(precision: int) -> tuple[int, int]:
    """(rows, columns) of the geohash grid at a precision: longitude takes the odd bit."""
    bits = 5 * precision
    return 1 << (bits // 2), 1 << ((bits + 1) // 2)


def _index(value: float, low: float, span: float, count: int) -> int:
    """The grid index holding value on an axis [low, low + span) cut into count parts."""
    return min(count - 1, max(0, math.floor((value - low) / span * count)))


def _spans(box: Box, precision: int) -> tuple[range, list[range]]:
    rows, cols = _grid(precision)
    row_span = range(
        _index(box.min_lat, -90.0, 180.0, rows), _index(box.max_lat, -90.0, 180.0, rows) + 1
    )
    col_spans = [
        range(_index(west, -180.0, 360.0, cols), _index(east, -180.0, 360.0, cols) + 1)
        for west, east in box.lng_ranges
    ]
    return row_span, col_spans


def cell_count(box: Box, precision: int) -> int:
    """How many cells of a precision the box touches, without enumerating them."""
    row_span, col_spans = _spans(box, precision)
    return len(row_span) * sum(len(span) for span in col_spans)


def grid_cells(box: Box, precision: int) -> tuple[range, list[int]]:
    """The rows and the columns of the cells of the precision that the box touches: it
    touches each row's cell in every one of the columns (which a box across 180° takes from
    both ends of the grid)."""
    row_span, col_spans = _spans(box, precision)
    return row_span, [col for span in col_spans for col in span]


_BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz"


def _spread(value: int) -> int:
    """The bits of `value` (below 2 ** 32) with a zero bit between each two."""
    value = (value | (value << 16)) & 0x0000FFFF0000FFFF
    value = (value | (value << 8)) & 0x00FF00FF00FF00FF
    value = (value | (value << 4)) & 0x0F0F0F0F0F0F0F0F
    value = (value | (value << 2)) & 0x3333333333333333
    return (value | (value << 1)) & 0x5555555555555555


def _names(precision: int) -> tuple[Callable[[int], int], Callable[[int], int], int]:
    """How a cell's bits come from its row and its column at a precision, as cell_name puts
    them: (the row's bits, the column's bits, how many), to be or-ed together."""
    bits = 5 * precision
    if bits % 2:  # longitude takes the first bit and the last
        return (lambda row: _spread(row) << 1), _spread, bits
    return _spread, (lambda col: _spread(col) << 1), bits


def _geohash(value: int, bits: int) -> str:
    return "".join([_BASE32[(value >> shift) & 31] for shift in range(bits - 5, -1, -5)])


def cell_name(row: int, col: int, precision: int) -> str:
    """The geohash of the grid cell at (row, col): its column's bits and its row's
    interleaved, longitude first, five bits a character."""
    row_bits, col_bits, bits = _names(precision)
    return _geohash(row_bits(row) | col_bits(col), bits)


def _longitude_gap(lng: float, west: float, east: float) -> float:
    """Degrees (0-180) from lng to the nearest longitude in [west, east], either way round."""
    if west <= lng <= east:
        return 0.0
    gaps = (abs(lng - edge) % 360.0 for edge in (west, east))
    return min(min(gap, 360.0 - gap) for gap in gaps)


class CellFloors:
    """Lower bounds of the distance from a point to every point of a cell, by the cell's
    grid index at one precision.

    The haversine formula hav θ = hav Δφ + cos φ₁ cos φ₂ hav Δλ is a sum of terms that each
    only grow with |Δφ|, |Δλ| and the cosines; taking each at its least over the cell (the
    latitude gap, the smaller cosine of the cell's edges, the longitude gap) bounds θ from
    below, so a cell whose floor exceeds the radius holds no point of the circle. The
    latitude terms are a row's, the longitude term a column's (`floor_km` adds them up).
    """

    def __init__(self, lat: float, lng: float, precision: int) -> None:
        rows, cols = _grid(precision)
        self._lat, self._lng = lat, lng
        self._lat_size, self._lng_size = 180.0 / rows, 360.0 / cols
        self._cos_lat = math.cos(math.radians(lat))

    def row(self, row: int) -> tuple[float, float]:
        """hav of the row's latitude gap, and cos φ₁ times the smaller cosine of its edges."""
        south = -90.0 + row * self._lat_size
        north = south + self._lat_size
        lat_gap = max(0.0, south - self._lat, self._lat - north)
        cos_edge = max(0.0, min(math.cos(math.radians(south)), math.cos(math.radians(north))))
        return math.sin(math.radians(lat_gap) / 2) ** 2, self._cos_lat * cos_edge

    def column(self, col: int) -> float:
        """hav of the column's longitude gap."""
        west = -180.0 + col * self._lng_size
        lng_gap = _longitude_gap(self._lng, west, west + self._lng_size)
        return math.sin(math.radians(lng_gap) / 2) ** 2


def floor_km(row: tuple[float, float], column: float) -> float:
    """The floor of a cell from its row's terms and its column's (CellFloors)."""
    hav_lat, scale = row
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(hav_lat + scale * column)))


def choose_precision(box: Box, max_cells: int = TARGET_CELLS) -> int:
    """The finest precision in [3, 7] covering the box with at most max_cells cells, else 3
    (the coarsest a geo_cell partition allows)."""
    for precision in range(MAX_PRECISION, MIN_PRECISION - 1, -1):
        if cell_count(box, precision) <= max_cells:
            return precision
    return MIN_PRECISION


def cover_circle(
    lat: float, lng: float, radius_km: float, max_cells: int = TARGET_CELLS
) -> Covering:
    """The cells whose union holds every point within radius_km of (lat, lng): those of the
    finest precision whose cells touching the circle's box are at most max_cells, less those
    the circle cannot reach. More cells read fewer points outside the circle."""
    if not 0.0 < radius_km <= MAX_RADIUS_KM:
        raise ValueError(f"radius must be in (0, {MAX_RADIUS_KM:g}] km, got {radius_km}")
    box = circle_box(lat, lng, radius_km)
    precision = choose_precision(box, max_cells)
    floors = CellFloors(lat, lng, precision)
    reach = radius_km * (1 + 1e-9) + 1e-9
    row_bits, col_bits, bits = _names(precision)
    rows, cols = grid_cells(box, precision)
    columns = [(floors.column(col), col_bits(col)) for col in cols]
    kept: list[str] = []
    for row in rows:
        terms, named = floors.row(row), row_bits(row)
        kept += [  # corner cells may miss the circle
            _geohash(named | col_named, bits)
            for column, col_named in columns
            if floor_km(terms, column) <= reach
        ]
    grouped: dict[str, list[str]] = {}
    for cell in sorted(kept):
        grouped.setdefault(cell[:GEO_CELL_LENGTH], []).append(cell)
    return Covering(precision, grouped)


_DIGITS = {digit: value for value, digit in enumerate("0123456789bcdefghjkmnpqrstuvwxyz")}
"""Geohash's base-32 digits, whose order is the order of their characters."""
RUN_END = "~"
"""Sorts after every geohash digit and after '#': a run's last cell followed by it bounds
every sort key starting with that cell from above, and no key after it."""


def runs(cells: list[str]) -> list[list[str]]:
    """Sorted cells of one precision and one geo_cell in runs of cells adjacent in geohash
    order: the sort keys within a run's cells are those between its first cell and its
    last + RUN_END."""
    found: list[list[str]] = []
    previous = -2
    for cell in cells:
        value = 0
        for digit in cell:
            value = value * 32 + _DIGITS[digit]
        if value == previous + 1 and found:
            found[-1].append(cell)
        else:
            found.append([cell])
        previous = value
    return found


def next_ring(ring_km: float, found: int, wanted: int, radius_km: float) -> float:
    """The next circle to read after one of ring_km held `found` of the `wanted` shops: wide
    enough for `wanted` at the density found (with a margin), at least twice as wide (so a
    sparse map takes few waves), at most the asked-for radius."""
    growth = MIN_GROWTH if found == 0 else math.sqrt(wanted / found) * DENSITY_MARGIN
    return min(radius_km, ring_km * max(MIN_GROWTH, growth))

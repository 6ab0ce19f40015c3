"""Capacity units a unit of work's store calls consume, as DynamoDB counts them.

`metering()` opens a meter for the calls made in its context (tasks started inside share it);
stores add what each call consumed: DynamoDB reports it (ReturnConsumedCapacity), the
embedded store computes it by DynamoDB's rules from the sizes it reads and writes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

READ_UNIT_BYTES = 4096
WRITE_UNIT_BYTES = 1024


@dataclass(slots=True)
class Meter:
    read_units: float = 0.0
    write_units: float = 0.0


_CURRENT: ContextVar[Meter | None] = ContextVar("keygraph_capacity_meter", default=None)


@contextmanager
def metering() -> Iterator[Meter]:
    """A fresh meter for the calls made inside the block."""
    meter = Meter()
    token = _CURRENT.set(meter)
    try:
        yield meter
    finally:
        _CURRENT.reset(token)


def active() -> bool:
    return _CURRENT.get() is not None


def add(read_units: float = 0.0, write_units: float = 0.0) -> None:
    """Count units against the open meter, if any."""
    meter = _CURRENT.get()
    if meter is not None:
        meter.read_units += read_units
        meter.write_units += write_units


def read_units(size: int, consistent: bool) -> float:
    """One read of `size` bytes: a unit per 4 KB begun (at least one), half when eventually
    consistent."""
    units = max(1, math.ceil(size / READ_UNIT_BYTES))
    return float(units) if consistent else units / 2


def batch_read_units(sizes: Iterable[int], consistent: bool) -> float:
    """BatchGetItem: each item read on its own (read_units of each, summed in one pass)."""
    units = sum((size + READ_UNIT_BYTES - 1) // READ_UNIT_BYTES or 1 for size in sizes)
    return float(units) if consistent else units / 2


def write_units(size: int, transactional: bool = False) -> float:
    """One write of `size` bytes: a unit per 1 KB begun, twice in a transaction."""
    units = max(1, math.ceil(size / WRITE_UNIT_BYTES))
    return float(units * 2 if transactional else units)

"""Server-generated ids: ULIDs, 48 bits of milliseconds then 80 random bits in Crockford
base32, so ids sort by creation time."""

from __future__ import annotations

import os
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_PAIRS = [high + low for high in _CROCKFORD for low in _CROCKFORD]
_PAIR_SHIFTS = tuple(range(120, -1, -10))
_ENTROPY_MASK = (1 << 80) - 1
_ULID_MASK = (1 << 130) - 1


def new_id() -> str:
    return ulid(time.time_ns() // 1_000_000, int.from_bytes(os.urandom(10), "big"))


def ulid(millis: int, entropy: int) -> str:
    """The ULID of a millisecond timestamp and 80 bits of entropy (seed data picks both):
    the value's 130 low bits as 26 characters of five bits, looked up two at a time."""
    value = (millis << 80 | entropy & _ENTROPY_MASK) & _ULID_MASK
    return "".join([_PAIRS[value >> shift & 1023] for shift in _PAIR_SHIFTS])

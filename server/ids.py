"""Server-generated ids and the opaque global ids GraphQL clients see.

A local id is a ULID: 48 bits of milliseconds then 80 random bits in Crockford base32, so ids
sort by creation time. A global id is base64url("<Type>:<local id>"), opaque to clients.
"""

from __future__ import annotations

import base64
import binascii
import os
import time

import strawberry

from .errors import BadUserInput, NotFound

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


def to_global_id(type_name: str, local_id: str) -> strawberry.ID:
    raw = f"{type_name}:{local_id}".encode()
    return strawberry.ID(base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii"))


def from_global_id(global_id: str) -> tuple[str, str]:
    """The (type name, local id) inside a global id; BadUserInput when it is not one."""
    try:
        raw = base64.urlsafe_b64decode(global_id + "=" * (-len(global_id) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise BadUserInput(f"{global_id!r} is not a valid id") from exc
    type_name, sep, local_id = raw.partition(":")
    if not sep or not type_name or not local_id:
        raise BadUserInput(f"{global_id!r} is not a valid id")
    return type_name, local_id


def local_id(global_id: str, type_name: str) -> str:
    """The local id of a global id that must name `type_name`; NotFound for another type."""
    found_type, found_id = from_global_id(global_id)
    if found_type != type_name:
        raise NotFound(f"no {type_name} with id {global_id!r}")
    return found_id

"""The opaque global ids GraphQL clients see: base64url("<Type>:<local id>")."""

from __future__ import annotations

import binascii

import strawberry

from server.errors import BadUserInput, NotFound

_SHORT = 96
"""Ids longer than this are quoted by their start in error messages."""
_TO_URLSAFE = bytes.maketrans(b"+/", b"-_")
_FROM_URLSAFE = bytes.maketrans(b"-_", b"+/")


def to_global_id(type_name: str, local_id: str) -> strawberry.ID:
    """The global id of a type's local id. Not cached: a cache of ids, replaced as new ids
    come, scatters long-lived entries among each request's short-lived objects and keeps
    the allocator's arenas from being freed (bench/README, the soak's memory)."""
    raw = f"{type_name}:{local_id}".encode()
    encoded = binascii.b2a_base64(raw, newline=False).translate(_TO_URLSAFE)
    return strawberry.ID(encoded.rstrip(b"=").decode("ascii"))


def from_global_id(global_id: str) -> tuple[str, str]:
    """The (type name, local id) inside a global id; BadUserInput when it is not one
    exactly as to_global_id spells it: base64url without padding, nothing around it, no
    stray bits in its last character. Any other spelling decoding to the same bytes would
    name the same object under a second id."""
    try:
        padded = (global_id + "=" * (-len(global_id) % 4)).encode()
        raw = binascii.a2b_base64(padded.translate(_FROM_URLSAFE), strict_mode=True)
        text = raw.decode()
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise BadUserInput(f"{_shown(global_id)} is not a valid id") from exc
    type_name, sep, local_id = text.partition(":")
    if not sep or not type_name or not local_id or to_global_id(type_name, local_id) != global_id:
        raise BadUserInput(f"{_shown(global_id)} is not a valid id")
    return type_name, local_id


def _shown(global_id: str) -> str:
    """The id as an error message quotes it: its start only, when it is long."""
    if len(global_id) <= _SHORT:
        return repr(global_id)
    return f"{global_id[:_SHORT]!r}… ({len(global_id)} characters)"


def local_id(global_id: str, type_name: str) -> str:
    """The local id of a global id that must name `type_name`; NotFound for another type."""
    found_type, found_id = from_global_id(global_id)
    if found_type != type_name:
        raise NotFound(f"no {type_name} with id {_shown(global_id)}")
    return found_id

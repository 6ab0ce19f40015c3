"""The opaque global ids GraphQL clients see: base64url("<Type>:<local id>")."""

from __future__ import annotations

import base64
import binascii
from functools import lru_cache

import strawberry

from server.errors import BadUserInput, NotFound


@lru_cache(maxsize=65536)
def to_global_id(type_name: str, local_id: str) -> strawberry.ID:
    """The global id of a local one; remembered, as a page's ids come back request after
    request."""
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

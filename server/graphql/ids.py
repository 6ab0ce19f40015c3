"""The opaque global ids GraphQL clients see: base64url("<Type>:<local id>")."""

from __future__ import annotations

import base64
import binascii
from functools import lru_cache

import strawberry

from server.errors import BadUserInput, NotFound

_REMEMBERED = 4096
"""Ids remembered each way, as a page's ids come back request after request."""
_SHORT = 96
"""Only ids up to this length are remembered, so the memory it takes stays bounded."""


def to_global_id(type_name: str, local_id: str) -> strawberry.ID:
    """The global id of a type's local id."""
    if len(local_id) <= _SHORT:
        return _remembered_global_id(type_name, local_id)
    return _global_id(type_name, local_id)


def _global_id(type_name: str, local_id: str) -> strawberry.ID:
    raw = f"{type_name}:{local_id}".encode()
    return strawberry.ID(base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii"))


_remembered_global_id = lru_cache(maxsize=_REMEMBERED)(_global_id)


def from_global_id(global_id: str) -> tuple[str, str]:
    """The (type name, local id) inside a global id; BadUserInput when it is not one,
    spelled as to_global_id spells it."""
    if len(global_id) <= _SHORT:
        return _remembered_parse(global_id)
    return _parse(global_id)


def _parse(global_id: str) -> tuple[str, str]:
    """The id's parts, when it is exactly how to_global_id spells them: base64url without
    padding, nothing around it, no stray bits in its last character. Any other spelling
    decoding to the same bytes would name the same object under a second id."""
    try:
        raw = base64.urlsafe_b64decode(global_id + "=" * (-len(global_id) % 4))
        text = raw.decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise BadUserInput(f"{_shown(global_id)} is not a valid id") from exc
    type_name, sep, local_id = text.partition(":")
    canonical = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    if not sep or not type_name or not local_id or canonical != global_id:
        raise BadUserInput(f"{_shown(global_id)} is not a valid id")
    return type_name, local_id


def _shown(global_id: str) -> str:
    """The id as an error message quotes it: its start only, when it is long."""
    if len(global_id) <= _SHORT:
        return repr(global_id)
    return f"{global_id[:_SHORT]!r}… ({len(global_id)} characters)"


_remembered_parse = lru_cache(maxsize=_REMEMBERED)(_parse)


def local_id(global_id: str, type_name: str) -> str:
    """The local id of a global id that must name `type_name`; NotFound for another type."""
    found_type, found_id = from_global_id(global_id)
    if found_type != type_name:
        raise NotFound(f"no {type_name} with id {_shown(global_id)}")
    return found_id

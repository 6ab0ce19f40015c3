"""The keys the extension's fields are given as global ids: NOT_FOUND for another type's id
or one no item can have, BAD_USER_INPUT for text that is no global id."""

from __future__ import annotations

from typing import Any

from generated.api import API
from keygraph import errors
from keygraph.api.ids import key_values, parse_global_id
from server.domain.org import MAX_LEVELS


def key_of(global_id: str, type_name: str) -> list[Any]:
    """The key parts a global id of `type_name` names: NOT_FOUND for another type's id,
    BAD_USER_INPUT for text that is no global id."""
    found, parts = parse_global_id(global_id)
    if found != type_name:
        raise errors.NotFound(f"no {type_name} with id {global_id!r}")
    return parts


def local_of(global_id: str, type_name: str) -> str:
    """The one text part of a global id of `type_name` (a user's, an order's)."""
    parts = key_of(global_id, type_name)
    if len(parts) != 1 or not isinstance(parts[0], str):
        raise errors.NotFound(f"no {type_name} with id {global_id!r}")
    return parts[0]


def path_of(global_id: str) -> tuple[str, ...]:
    """The path an OrgNode's global id names, spelled as its type's id binding says (its
    parts joined by dots); NOT_FOUND for one no node can have."""
    parts = key_of(global_id, "OrgNode")
    missing = errors.NotFound(f"no OrgNode with id {global_id!r}")
    try:
        (path,) = key_values(API.types["OrgNode"].node, parts, API.enums)
    except errors.BadArgument as exc:
        raise missing from exc
    if not 0 < len(path) <= MAX_LEVELS or not all(path):
        raise missing
    return tuple(path)

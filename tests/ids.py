"""The global ids this repository's API hands out, as a test spells and reads them: the
spec's own encoding (keygraph/api/ids.py) of a type's one-part key."""

from __future__ import annotations

from keygraph.api.ids import global_id, parse_global_id


def to_global_id(type_name: str, local: str) -> str:
    """The global id of an item of `type_name` whose key is the one text `local`."""
    return global_id(type_name, [local])


def from_global_id(value: str) -> tuple[str, str]:
    """The type name and one text part a global id names; ValueError for any other id."""
    type_name, parts = parse_global_id(value)
    if len(parts) != 1 or not isinstance(parts[0], str):
        raise ValueError(f"{value!r} names no one-part key")
    return type_name, parts[0]


def local_id(value: str, type_name: str) -> str:
    """The one text part of a global id that must name `type_name`."""
    found, local = from_global_id(value)
    if found != type_name:
        raise ValueError(f"{value!r} names a {found}, not a {type_name}")
    return local

"""Global ids: a type's name and the parts of its key, as base64url of `Type:[parts]` (each
part as GraphQL shows it, compact JSON), or `Type:part` for a key of one text part not
starting with `[`, so `node(id:)` knows which type to read and with what; a path whose spec
gives it an id separator is one text part, its parts joined by it (`OrgNode:a.b`)."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import date, datetime
from enum import Enum
from typing import Any

from keygraph.errors import BadArgument

from .bindings import Arg


def _shown(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value


def global_id(type_name: str, parts: list[Any]) -> str:
    if len(parts) == 1 and type(parts[0]) is str and parts[0][:1] not in ("", "["):
        raw = binascii.b2a_base64((type_name + ":" + parts[0]).encode(), newline=False)
        return raw.translate(_URLSAFE).rstrip(b"=").decode("ascii")
    if all(type(part) is str and _plain(part) for part in parts):
        listed = '["' + '","'.join(parts) + '"]'  # what json.dumps writes for these
    else:
        listed = json.dumps([_shown(p) for p in parts], separators=(",", ":"))
    raw = binascii.b2a_base64((type_name + ":" + listed).encode(), newline=False)
    return raw.translate(_URLSAFE).rstrip(b"=").decode("ascii")


_URLSAFE = bytes.maketrans(b"+/", b"-_")


def _plain(text: str) -> bool:
    """Whether JSON writes the string as it is, between quotes: printable ASCII, no quote
    or backslash."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def parse_global_id(value: str) -> tuple[str, list[Any]]:
    """The type name and raw parts of a global id; BadArgument for one that is no id: no
    type name, its parts nested deeper than a key's (a part is a value or a list of values;
    JSON nested past the interpreter's recursion limit too), or not spelled as global_id
    spells it (another spelling would name the item twice)."""
    try:
        text = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode()
        type_name, _, raw = text.partition(":")
        parts = json.loads(raw) if raw.startswith("[") else [raw]
    except (binascii.Error, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BadArgument(f"not a global id: {_quoted(value)}") from exc
    if not type_name or not isinstance(parts, list) or not all(map(_part, parts)):
        raise BadArgument(f"not a global id: {_quoted(value)}")
    if global_id(type_name, parts) != value:
        raise BadArgument(f"not a global id: {_quoted(value)}")
    return type_name, parts


def _part(part: Any) -> bool:
    """Whether a decoded part is one a key has: a value, or a list of values (a path)."""
    if isinstance(part, list):
        return not any(isinstance(inner, list | dict) for inner in part)
    return not isinstance(part, dict)


def _quoted(value: str) -> str:
    """The id as a message quotes it: its start only, when it is long."""
    return repr(value) if len(value) <= 96 else f"{value[:96]!r}… ({len(value)} characters)"


def id_part(arg: Arg, value: Any) -> Any:
    """A key value as its global id holds it: a path with a separator as its parts joined by
    it, unless one is empty or holds it (then a list, which joined would name another path)."""
    separator = arg.separator
    if separator is None or arg.kind != "Path":
        return value
    if value and all(type(p) is str and p and separator not in p for p in value):
        return separator.join(value)
    return list(value)


def key_values(args: tuple[Arg, ...], parts: list[Any], enums: dict[str, type[Enum]]) -> list[Any]:
    """A global id's parts as the key's values; BadArgument when they do not fit, or when
    id_part would spell them otherwise (a joined path as a list, `a..b`)."""
    if len(parts) != len(args):
        raise BadArgument("a global id of another key")
    values = []
    for arg, part in zip(args, parts, strict=True):
        try:
            value = _value(arg, part, enums)
        except (TypeError, ValueError) as exc:
            raise BadArgument(f"a global id whose {arg.name} does not fit") from exc
        if arg.separator is not None and id_part(arg, value) != part:
            raise BadArgument(f"a global id whose {arg.name} does not fit")
        values.append(value)
    return values


def _value(arg: Arg, part: Any, enums: dict[str, type[Enum]]) -> Any:
    kind = arg.kind
    if kind == "Path" and arg.separator is not None and isinstance(part, str):
        return tuple(part.split(arg.separator))
    if kind == "DateTime":
        return datetime.fromisoformat(part)
    if kind == "Date":
        return date.fromisoformat(part)
    if kind in ("Int", "Long"):
        if isinstance(part, bool) or not isinstance(part, int):
            raise TypeError(part)
        return part
    if kind == "Path":
        return tuple(str(p) for p in part)
    if kind in enums:
        return enums[kind](part)
    if not isinstance(part, str):
        raise TypeError(part)
    return part

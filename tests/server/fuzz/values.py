"""Hostile values for a place in the schema: boundaries of its own type (Int32 and float
edges, key-size edges, strings near the body limit, unicode and control characters,
delimiter-looking strings, hostile ids of every Node type), and values of every wrong type
(null for non-null, lists for scalars and scalars for lists, missing and extra input
fields)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    get_named_type,
)

from server.settings import Limits
from tests.server.fuzz.positions import MISSING, EnumName, node_types

BODY_LIMIT = Limits().max_body_bytes
NEAR_BODY_LIMIT = BODY_LIMIT - 4096
"""A string this long still fits in a request body with its document."""


@dataclass(frozen=True)
class Hostile:
    """A value to send, or how to make it from the valid value of the place (`derive`),
    and a short name for it in a failure."""

    label: str
    value: Any = None
    derive: Callable[[Any], Any] | None = None

    def __call__(self, valid: Any) -> Any:
        return self.derive(valid) if self.derive is not None else self.value

    def __repr__(self) -> str:
        return self.label


def _h(value: Any, label: str | None = None) -> Hostile:
    return Hostile(label or repr(value)[:60], value)


def _derived(label: str, derive: Callable[[Any], Any]) -> Hostile:
    return Hostile(label, derive=derive)


INTS = [
    _h(v)
    for v in (0, -1, 2**31 - 1, -(2**31 - 1), -(2**31), 2**31, -(2**31) - 1, 2**53, 2**63, -(2**64))
] + [_h(10**400, "10**400")]
FLOATS = [_h(v) for v in (1.5, -0.0, 1e308, -1e308, 5e-324, 2.0**31, 9007199254740993.0)]
SIZES = (1025, 2049, 5000, 70_000)
"""Past DynamoDB's sort-key (1,024 bytes) and partition-key (2,048 bytes) limits, a page of
text, and far past them."""
STRINGS = [
    _h(v)
    for v in (
        "",
        " ",
        "1",
        "1.5",
        "-2147483649",
        "true",
        "null",
        "#",
        "%",
        "/",
        "%00%s%n",
        "a#b#c",
        "USER#x",
        "Order:1",
        "../../etc/passwd",
        "\\",
        "\x00",
        "a\x00b",
        "\x01\x1f\x7f\x1b[31m\n\r\t",
        "\U0001d518\U0001f600\U0010ffff",
        "\u202egnp.exe\u200f\u05e2\u05d1",
        "e\u0301\u0301\u0301\u0336",
        "\u200b\ufeff",
        "\ud800",
        "' OR 1=1 --",
    )
] + [
    *(_h("x" * size, f"'x' * {size}") for size in SIZES),
    _h("#" * 2000, "'#' * 2000"),
    _h("\U0001f600" * 1100, "'\U0001f600' * 1100"),
    _h("é" * 1500, "'é' * 1500"),
    _h("x" * NEAR_BODY_LIMIT, f"'x' * {NEAR_BODY_LIMIT}"),
]
DATETIMES = [
    _h(v)
    for v in (
        "2026-13-45T99:00:00Z",
        "2026-01-01T00:00:00",
        "2026-01-01",
        "9999-12-31T23:59:59+00:00",
        "0001-01-01T00:00:00+00:00",
        "2026-01-01T00:00:00+25:00",
        "1e10",
    )
]
_WRONG: tuple[Any, ...] = (None, True, 1, 1.5, "abc", [], [1], ["a"], [None], {}, {"f": "abc"})
WRONG_TYPES = [*(_h(v) for v in _WRONG), _h([[[]]]), _h(MISSING)]


def global_id(type_name: str, local: str) -> str:
    """An id in the API's format, for any type and local part."""
    raw = f"{type_name}:{local}".encode("utf-8", "surrogatepass")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


LOCAL_IDS = ("", "#", "a#b", "\x00", "../x", "#" * 2000, "x" * 5000)
BAD_IDS = [
    _h("not base64!!"),
    _h("===="),
    _h(base64.urlsafe_b64encode(b"\xff\xfe:x").decode(), "b64(invalid utf-8)"),
    _h(global_id("Nope", "x"), "id(Nope:x)"),
    _h(global_id("", "x"), "id(:x)"),
]


def ids_of(type_name: str) -> list[Hostile]:
    """Hostile ids naming `type_name`: empty, delimiter-looking and over-long local parts."""
    return [
        _h(global_id(type_name, local), f"id({type_name}:{local[:8]!r}*{len(local)})")
        for local in LOCAL_IDS
    ]


def own_type(kind: GraphQLInputType, expected_id: str) -> list[Hostile]:
    """The edges of `kind` itself (ids naming `expected_id`); null for a non-null place."""
    found = [_h(None)] if isinstance(kind, GraphQLNonNull) else []
    nullable = kind.of_type if isinstance(kind, GraphQLNonNull) else kind
    if isinstance(nullable, GraphQLList):
        return found + _lists()
    if isinstance(nullable, GraphQLInputObjectType):
        return found + _objects(nullable)
    if isinstance(nullable, GraphQLEnumType):
        names = list(nullable.values)
        return [*found, _h(EnumName("BOGUS")), _h(EnumName(names[0].lower())), _h(names[0])]
    assert isinstance(nullable, GraphQLScalarType)
    return (
        found
        + {
            "Int": [*INTS, FLOATS[0], _h("1")],
            "Float": FLOATS + INTS[2:7] + [_h("1.5")],
            "String": STRINGS,
            "ID": ids_of(expected_id) + BAD_IDS + STRINGS[:1] + STRINGS[-7:-1],
            "DateTime": DATETIMES + STRINGS[:1] + STRINGS[-7:-1] + [_h(0)],
            "Boolean": [_h("true"), _h(0)],
        }[nullable.name]
    )


def _lists() -> list[Hostile]:
    return [
        _h([]),
        _h([None]),
        _h({}, "object for a list"),
        _h([[]], "list of lists"),
        _derived("its element alone", _first),
        _derived("51 copies", lambda valid: [_first(valid)] * 51),
        _derived("1000 copies", lambda valid: [_first(valid)] * 1000),
    ]


def _first(valid: Any) -> Any:
    return valid[0] if isinstance(valid, list) and valid else "x"


def _objects(kind: GraphQLInputObjectType) -> list[Hostile]:
    found = [
        _derived("extra field", lambda valid: {**_fields(valid), "bogusField": 1}),
        _derived("object in a list", lambda valid: [valid]),
    ]
    ints = [name for name, spec in kind.fields.items() if get_named_type(spec.type).name == "Int"]
    if ints:
        # each field valid alone, together past what an Int32 sum or product holds
        found.append(_derived("every Int at 2**31-1", lambda valid: _with(valid, ints, 2**31 - 1)))
        found.append(_derived("every Int at -2**31", lambda valid: _with(valid, ints, -(2**31))))
    for name, spec in sorted(kind.fields.items()):
        found.append(_derived(f"without {name}", partial(_without, name=name)))
        if isinstance(spec.type, GraphQLNonNull):
            found.append(_derived(f"{name}: null", partial(_nulled, name=name)))
    return found


def _fields(valid: Any) -> dict[str, Any]:
    return dict(valid) if isinstance(valid, dict) else {}


def _with(valid: Any, names: list[str], value: Any) -> dict[str, Any]:
    return {**_fields(valid), **dict.fromkeys(names, value)}


def _without(valid: Any, name: str) -> dict[str, Any]:
    return {key: inner for key, inner in _fields(valid).items() if key != name}


def _nulled(valid: Any, name: str) -> dict[str, Any]:
    return {**_fields(valid), name: None}


ALL_IDS = [hostile for name in node_types() for hostile in ids_of(name)]
"""Hostile ids of every Node type, for a long hunt."""

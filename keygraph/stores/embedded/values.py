"""Item values as DynamoDB stores them: validated, numbers in canonical form, encoded as
DynamoDB JSON (binary as base64), with the item size computed the DynamoDB way.

An item whose values JSON holds exactly (strings, booleans, nulls, 64-bit integers, and lists
and maps of them: nearly every item) is also expressible as plain JSON, which reads back in
one parse with no per-attribute decoding. So is one whose other values are fractions, as
top-level attributes, that a float carries exactly (a latitude, a price): those read back
through the float's shortest text. Others keep DynamoDB JSON."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from decimal import Context, Decimal, InvalidOperation
from typing import Any

import orjson

from keygraph.errors import ValidationError
from keygraph.plan import Floats

ITEM_SIZE_LIMIT = 400 * 1024
_MAX_DIGITS = 38
_MAX_EXPONENT = 125  # magnitude below 1E+126
_MIN_EXPONENT = -130  # magnitude at least 1E-130
_INT_LIMIT = 10**_MAX_DIGITS  # ints below it in magnitude take the fast path

_INT64 = 1 << 63  # plain JSON bodies carry integers in [-2**63, 2**63)

_EXACT = Context(prec=200)  # normalize() must not round: DynamoDB refuses, never rounds

WIRE, PLAIN, FRACTIONS = 0, 1, 2
"""A stored body's format (the items table's `plain` column): DynamoDB JSON; plain JSON;
plain JSON whose top-level floats stand for Decimal fractions."""

Wire = dict[str, Any]
"""One attribute value in DynamoDB JSON, e.g. {"S": "x"} or {"N": "1.5"}."""


def canonical_number(value: int | Decimal | str) -> str:
    """The number as DynamoDB returns it (plain notation, no superfluous zeros), refusing
    what DynamoDB refuses: more than 38 significant digits, out of range, NaN, infinity."""
    try:
        number = Decimal(value)
    except InvalidOperation as exc:
        raise ValidationError(f"{value!r} is not a number") from exc
    if not number.is_finite():
        raise ValidationError("numbers must be finite (no NaN or Infinity)")
    if number.is_zero():
        return "0"
    number = number.normalize(_EXACT)
    digits = number.as_tuple().digits
    if len(digits) > _MAX_DIGITS:
        raise ValidationError("DynamoDB only supports precision up to 38 digits")
    if number.adjusted() > _MAX_EXPONENT:
        raise ValidationError("Number overflow: magnitude larger than supported range")
    if number.adjusted() < _MIN_EXPONENT:
        raise ValidationError("Number underflow: magnitude smaller than supported range")
    return format(number, "f")


def number_size(text: str) -> int:
    """Bytes DynamoDB counts for a number: one per pair of significant digits (pairs aligned
    on the decimal point), one for the exponent, one more if negative."""
    number = Decimal(text)
    if number.is_zero():
        return 1
    sign, digits, exponent = number.normalize(_EXACT).as_tuple()
    assert isinstance(exponent, int)
    highest = exponent + len(digits) - 1
    return highest // 2 - exponent // 2 + 2 + sign


def _int_wire(value: int) -> tuple[Wire, int]:
    """canonical_number and number_size for an int of at most 38 digits, without Decimal:
    its canonical text is str(value), and trailing zeros only move the exponent."""
    text = str(value)
    return {"N": text}, _int_text_size(text)


def _int_text_size(text: str) -> int:
    """number_size of an int's str()."""
    if text == "0":
        return 1
    digits = text.lstrip("-")
    exponent = len(digits) - len(digits.rstrip("0"))
    return (len(digits) - 1) // 2 - exponent // 2 + 2 + (text[0] == "-")


def utf8_size(text: str) -> int:
    """The UTF-8 length of a string; a string that has none (a lone surrogate, which JSON
    can smuggle in as an escape) is refused as DynamoDB refuses it."""
    if text.isascii():  # a flag of the string: no copy to count
        return len(text)
    try:
        return len(text.encode())
    except UnicodeEncodeError as exc:
        raise ValidationError(f"strings must be valid Unicode: {exc.reason}") from exc


def decode_number(text: str) -> int | Decimal:
    return Decimal(text) if "." in text else int(text)


def _encode_set(values: set[Any] | frozenset[Any]) -> tuple[Wire, int]:
    if not values:
        raise ValidationError("One or more parameter values were invalid: a set may not be empty")
    if all(isinstance(v, str) for v in values):
        strings = sorted(values)
        return {"SS": strings}, sum(utf8_size(s) for s in strings)
    if all(isinstance(v, bytes | bytearray) for v in values):
        blobs = sorted(bytes(v) for v in values)
        return {"BS": [base64.b64encode(b).decode() for b in blobs]}, sum(len(b) for b in blobs)
    if all(isinstance(v, int | Decimal) and not isinstance(v, bool) for v in values):
        numbers = sorted({canonical_number(v) for v in values}, key=Decimal)
        return {"NS": numbers}, sum(number_size(n) for n in numbers)
    raise ValidationError("a set must hold only strings, only numbers or only bytes")


def encode(value: Any) -> tuple[Wire, int]:
    """The DynamoDB JSON of a Python value and its size in bytes."""
    if isinstance(value, str):
        return {"S": value}, utf8_size(value)
    if isinstance(value, bool):
        return {"BOOL": value}, 1
    if type(value) is int and -_INT_LIMIT < value < _INT_LIMIT:
        return _int_wire(value)
    if isinstance(value, int | Decimal):
        text = canonical_number(value)
        return {"N": text}, number_size(text)
    if value is None:
        return {"NULL": True}, 1
    if isinstance(value, bytes | bytearray):
        return {"B": base64.b64encode(value).decode()}, len(value)
    if isinstance(value, Mapping):
        wire_map, size = encode_item(value)
        return {"M": wire_map}, size + 3 + len(wire_map)
    if isinstance(value, list | tuple):
        elements = [encode(v) for v in value]
        return (
            {"L": [wire for wire, _ in elements]},
            3 + sum(size for _, size in elements) + len(elements),
        )
    if isinstance(value, set | frozenset):
        return _encode_set(value)
    if isinstance(value, float):
        raise ValidationError("floats are not supported: use int or Decimal")
    raise ValidationError(f"unsupported attribute value type {type(value).__name__}")


def encode_item(item: Mapping[str, Any]) -> tuple[dict[str, Wire], int]:
    """The DynamoDB JSON of an item and its size (attribute names count too)."""
    wire: dict[str, Wire] = {}
    size = 0
    for name, value in item.items():
        wire[name], value_size = encode(value)
        size += utf8_size(name) + value_size
    return wire, size


def dumps(wire: Mapping[str, Wire]) -> str:
    """The stored text of an encoded item."""
    return json.dumps(wire, ensure_ascii=False, separators=(",", ":"))


def decode(wire: Wire) -> Any:
    ((tag, raw),) = wire.items()
    if tag in {"S", "BOOL"}:
        return raw
    if tag == "N":
        return decode_number(raw)
    if tag == "M":
        return decode_item(raw)
    if tag == "L":
        return [decode(v) for v in raw]
    if tag == "NULL":
        return None
    if tag == "B":
        return base64.b64decode(raw)
    if tag == "SS":
        return set(raw)
    if tag == "NS":
        return {decode_number(n) for n in raw}
    return {base64.b64decode(b) for b in raw}


def decode_item(wire: Mapping[str, Wire]) -> dict[str, Any]:
    """The Python item of a stored one. Strings and numbers, nearly every attribute, are
    tested for first, inline: this runs on every attribute of every item read."""
    item: dict[str, Any] = {}
    for name, value in wire.items():
        if "S" in value:
            item[name] = value["S"]
        elif "N" in value:
            item[name] = decode_number(value["N"])
        else:
            item[name] = decode(value)
    return item


def _is_plain(value: Any) -> bool:
    """Whether plain JSON carries a decoded value exactly."""
    if value is None or isinstance(value, str | bool):
        return True
    if type(value) is int:
        return -_INT64 <= value < _INT64
    if isinstance(value, list):
        return all(_is_plain(element) for element in value)
    if isinstance(value, dict):
        return all(_is_plain(element) for element in value.values())
    return False  # Decimal fractions, bytes, sets


def plain_size(item: Mapping[str, Any]) -> int | None:
    """The size encode_item gives an item whose values plain JSON carries exactly (as
    _is_plain, attribute names strings), computed without building its DynamoDB JSON; None
    for any other item, which encode_item then encodes (and refuses, if it must)."""
    if type(item) is not dict:
        return None
    return _plain_map_size(item)


def _plain_map_size(values: dict[Any, Any]) -> int | None:
    size = 0
    for name, value in values.items():
        if not isinstance(name, str):
            return None
        value_size = _plain_value_size(value)
        if value_size is None:
            return None
        size += utf8_size(name) + value_size
    return size


def _plain_value_size(value: Any) -> int | None:
    """encode(value)'s size for a plain value, None for others."""
    if isinstance(value, str):
        return utf8_size(value)
    if value is None or isinstance(value, bool):
        return 1
    if type(value) is int:
        return _int_text_size(str(value)) if -_INT64 <= value < _INT64 else None
    if isinstance(value, dict):
        size = _plain_map_size(value)
        return None if size is None else size + 3 + len(value)
    if isinstance(value, list):
        total = 3 + len(value)
        for element in value:
            element_size = _plain_value_size(element)
            if element_size is None:
                return None
            total += element_size
        return total
    return None


def plain_body(wire: Mapping[str, Wire], item: Mapping[str, Any] | None = None) -> str | None:
    """The item as plain JSON, which reads back as decode_item(wire) does; None when a value
    (a fraction, a huge integer, binary, a set) needs DynamoDB JSON. `item`, the item `wire`
    encodes: when its values are plain already, they are what decoding would give."""
    if item is not None and type(item) is dict and _is_plain(item):
        return orjson.dumps(item).decode()
    decoded = decode_item(wire)
    return orjson.dumps(decoded).decode() if _is_plain(decoded) else None


def _fractions_body(decoded: dict[str, Any]) -> str | None:
    """The item as plain JSON with its fractions as floats, when every value is plain but
    top-level fractions each of which its float's shortest text gives back exactly."""
    converted: dict[str, Any] = {}
    for name, value in decoded.items():
        if type(value) is Decimal:
            number = float(value)
            if Decimal(repr(number)).as_tuple() != value.as_tuple():
                return None
            converted[name] = number
        elif _is_plain(value):
            converted[name] = value
        else:
            return None
    return orjson.dumps(converted).decode()


def stored_body(wire: Mapping[str, Wire], item: Mapping[str, Any] | None = None) -> tuple[str, int]:
    """The stored text of an encoded item and its format (PLAIN, FRACTIONS or WIRE), for
    the leanest format that reads back as decode_item(wire); `item` as for plain_body."""
    plain = plain_body(wire, item)
    if plain is not None:
        return plain, PLAIN
    fractions = _fractions_body(decode_item(wire))
    if fractions is not None:
        return fractions, FRACTIONS
    return dumps(wire), WIRE


def item_of(body: str | bytes, plain: int, floats: Floats = frozenset()) -> dict[str, Any]:
    """The Python item of a stored body in format `plain` (PLAIN, FRACTIONS or WIRE), the
    numbers named in `floats` as floats."""
    if plain == PLAIN:
        found: dict[str, Any] = orjson.loads(body)
        return as_floats(found, floats) if floats else found
    if plain == FRACTIONS:
        item: dict[str, Any] = orjson.loads(body)
        for name, value in item.items():
            if type(value) is float:
                if name not in floats:
                    item[name] = Decimal(repr(value))
            elif type(value) is int and name in floats:
                item[name] = float(value)
        return item
    decoded = decode_item(orjson.loads(body))
    return as_floats(decoded, floats) if floats else decoded


def as_floats(item: dict[str, Any], floats: Floats) -> dict[str, Any]:
    """The item with its numbers named in `floats` made floats, in place."""
    for name in floats:
        value = item.get(name)
        if type(value) is int or type(value) is Decimal:
            item[name] = float(value)
    return item

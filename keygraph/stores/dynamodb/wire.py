"""Python values to DynamoDB JSON attribute values as the wire carries them (binary as
base64 text), and back. Hand-written: a type switch instead of boto3's TypeSerializer
dispatch, which matters on every item of every response."""

from __future__ import annotations

import binascii
from base64 import b64decode, b64encode
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from keygraph.errors import ValidationError
from keygraph.plan import Floats

AttributeValue = dict[str, Any]


def _set(values: set[Any] | frozenset[Any]) -> AttributeValue:
    first = next(iter(values), None)
    if isinstance(first, str):
        return {"SS": list(values)}
    if isinstance(first, bytes | bytearray):
        return {"BS": [b64encode(v).decode() for v in values]}
    if isinstance(first, int | Decimal) and not isinstance(first, bool):
        for number in values:
            if isinstance(number, float):
                raise ValidationError("floats are not supported: use int or Decimal")
        return {"NS": [str(v) for v in values]}
    if first is None:
        raise ValidationError("One or more parameter values were invalid: a set may not be empty")
    raise ValidationError(f"unsupported set element type {type(first).__name__}")


def serialize(value: Any) -> AttributeValue:
    kind = type(value)
    if kind is str:
        return {"S": value}
    if kind is int or kind is Decimal:
        return {"N": str(value)}
    if kind is bool:
        return {"BOOL": value}
    if kind is dict:
        return {"M": {k: serialize(v) for k, v in value.items()}}
    if kind is list or kind is tuple:
        return {"L": [serialize(v) for v in value]}
    if value is None:
        return {"NULL": True}
    if kind is bytes or kind is bytearray:
        return {"B": b64encode(value).decode()}
    if kind is set or kind is frozenset:
        return _set(value)
    if kind is float:
        raise ValidationError("floats are not supported: use int or Decimal")
    if isinstance(value, Mapping):
        return {"M": {k: serialize(v) for k, v in value.items()}}
    if isinstance(value, int):
        return {"N": str(int(value))}
    raise ValidationError(f"unsupported attribute value type {kind.__name__}")


def serialize_item(item: Mapping[str, Any]) -> dict[str, AttributeValue]:
    return {name: serialize(value) for name, value in item.items()}


def _number(text: str) -> int | Decimal:
    return Decimal(text) if "." in text or "E" in text or "e" in text else int(text)


def _binary(text: str) -> bytes:
    try:
        return b64decode(text, validate=True)
    except binascii.Error as exc:
        raise ValidationError(f"invalid base64 binary value: {exc}") from exc


def deserialize(value: AttributeValue) -> Any:
    for tag, raw in value.items():
        if tag in {"S", "BOOL"}:
            return raw
        if tag == "N":
            return _number(raw)
        if tag == "M":
            return {k: deserialize(v) for k, v in raw.items()}
        if tag == "L":
            return [deserialize(v) for v in raw]
        if tag == "NULL":
            return None
        if tag == "B":
            return _binary(raw)
        if tag == "SS":
            return set(raw)
        if tag == "BS":
            return {_binary(b) for b in raw}
        if tag == "NS":
            return {_number(n) for n in raw}
    raise ValidationError(f"unknown attribute value {value!r}")


def deserialize_item(
    item: Mapping[str, AttributeValue], floats: Floats = frozenset()
) -> dict[str, Any]:
    """The Python item, its top-level numbers named in `floats` as floats."""
    if floats:
        return {
            name: float(value["N"]) if name in floats and "N" in value else deserialize(value)
            for name, value in item.items()
        }
    return {name: deserialize(value) for name, value in item.items()}


def serialize_key(key: Mapping[str, str]) -> dict[str, AttributeValue]:
    return {name: {"S": value} for name, value in key.items()}


def deserialize_key(key: Mapping[str, AttributeValue]) -> dict[str, str]:
    return {name: value["S"] for name, value in key.items()}

"""Write conditions evaluated the DynamoDB way on a stored item: only a compared attribute
is encoded as DynamoDB JSON, to compare it as DynamoDB does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from keygraph.plan import Condition

from .values import Wire, encode


def encode_values(conditions: Sequence[Condition]) -> list[Wire | None]:
    """The compared values in canonical DynamoDB JSON (validating them up front)."""
    return [encode(c.value)[0] if c.op in ("equals", "less_than") else None for c in conditions]


def holds(
    conditions: Sequence[Condition],
    values: Sequence[Wire | None],
    item: Mapping[str, Any] | None,
) -> bool:
    """Whether every condition holds on the item (None: no item). Values are canonical on
    both sides (numbers normalised, sets sorted), so equality of the JSON is DynamoDB's
    equality: same type and same value."""
    attributes: Mapping[str, Any] = item or {}
    for condition, value in zip(conditions, values, strict=True):
        name = condition.attribute
        if condition.op == "exists":
            ok = name in attributes
        elif condition.op == "not_exists":
            ok = name not in attributes
        elif name not in attributes or value is None:
            ok = False
        elif condition.op == "less_than":
            ok = _less(encode(attributes[name])[0], value)
        else:
            ok = encode(attributes[name])[0] == value
        if not ok:
            return False
    return True


def _less(present: Wire, value: Wire) -> bool:
    """DynamoDB's `<`: numbers by value, strings by their UTF-8 bytes; other types, or two
    of different types, are never less."""
    if "N" in present and "N" in value:
        return Decimal(present["N"]) < Decimal(value["N"])
    if "S" in present and "S" in value:
        return bool(present["S"].encode() < value["S"].encode())
    return False

"""Write conditions evaluated the DynamoDB way on a stored item (DynamoDB JSON)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from keygraph.plan import Condition

from .values import Wire, encode


def encode_values(conditions: Sequence[Condition]) -> list[Wire | None]:
    """The compared values in canonical DynamoDB JSON (validating them up front)."""
    return [encode(c.value)[0] if c.op == "equals" else None for c in conditions]


def holds(
    conditions: Sequence[Condition],
    values: Sequence[Wire | None],
    item: Mapping[str, Wire] | None,
) -> bool:
    """Whether every condition holds on the item (None: no item). Values are canonical on
    both sides (numbers normalised, sets sorted), so equality of the JSON is DynamoDB's
    equality: same type and same value."""
    attributes: Mapping[str, Wire] = item or {}
    for condition, value in zip(conditions, values, strict=True):
        present = attributes.get(condition.attribute)
        if condition.op == "exists":
            ok = present is not None
        elif condition.op == "not_exists":
            ok = present is None
        else:
            ok = present is not None and present == value
        if not ok:
            return False
    return True

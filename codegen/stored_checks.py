"""Cheap checks of loaded values: a generated `from_item` builds its model without validation
when every value passes its check, since validation would then keep each as it is; a value
that fails (or an attribute of a kind without a check) goes through validation as before.

A check may refuse what validation accepts, never the reverse: `isprintable()` stands for
the Id type's pattern (no control characters), and other patterns are matched by pydantic's
own engine (`keygraph.stored.matcher`)."""

from __future__ import annotations

from dataclasses import dataclass

from .pytypes import ID_MAX_LENGTH
from .spec import AttributeSpec


@dataclass(frozen=True, slots=True)
class Matcher:
    """A module-level matcher of a string attribute's pattern."""

    name: str
    pattern: str


def matcher_name(attribute: str) -> str:
    return f"_{attribute.upper()}_PATTERN"


def _bounds(var: str, low: object, high: object) -> list[str]:
    if low is not None and high is not None:
        return [f"{low!r} <= {var} <= {high!r}"]
    if low is not None:
        return [f"{var} >= {low!r}"]
    if high is not None:
        return [f"{var} <= {high!r}"]
    return []


def _id(var: str, spec: AttributeSpec | None) -> list[str]:
    longest = ID_MAX_LENGTH
    if spec is not None and spec.max_length is not None:
        longest = min(longest, spec.max_length)
    return [f"type({var}) is str", f"0 < len({var}) <= {longest}", f"{var}.isprintable()"]


def _string(var: str, spec: AttributeSpec) -> list[str]:
    return [f"type({var}) is str", *_bounds(f"len({var})", spec.min_length, spec.max_length)]


def _list(var: str, spec: AttributeSpec) -> list[str] | None:
    if spec.of != "id":
        return None
    return [
        f"type({var}) is list",
        *_bounds(f"len({var})", spec.min_items, spec.max_items),
        f"_stored.are_ids({var}, {ID_MAX_LENGTH})",
    ]


def value_check(
    name: str, spec: AttributeSpec, var: str, enum_class: str | None
) -> tuple[str, Matcher | None] | None:
    """The expression saying that `var`, the loaded value of attribute `name`, is one
    validation keeps as it is, and the matcher it uses; None for a kind without a check."""
    kind = spec.type
    parts: list[str] | None
    if kind == "id":
        parts = _id(var, spec)
    elif kind == "string":
        parts = _string(var, spec)
    elif kind == "int":
        parts = [f"type({var}) is int", *_bounds(var, spec.ge, spec.le)]
    elif kind == "float":  # both bounds keep out NaN and the infinities
        both = spec.ge is not None and spec.le is not None
        parts = [f"type({var}) is float", *_bounds(var, spec.ge, spec.le)] if both else None
    elif kind == "bool":
        parts = [f"type({var}) is bool"]
    elif kind == "datetime":
        parts = [f"_stored.is_utc({var})"]
    elif kind == "enum":
        parts = [f"type({var}) is {enum_class}"]
    elif kind == "list":
        parts = _list(var, spec)
    else:
        parts = None
    if parts is None:
        return None
    found = None
    if spec.pattern is not None and kind in ("id", "string"):
        found = Matcher(matcher_name(name), spec.pattern)
        parts.append(f"{found.name}({var})")
    check = " and ".join(parts)
    if spec.optional:
        check = f"({var} is None or ({check}))" if len(parts) > 1 else f"({var} is None or {check})"
    return check, found

"""Query and write plans: plain data that a Store executes. No expression strings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "BatchGet",
    "Check",
    "Condition",
    "Conditions",
    "Delete",
    "Floats",
    "Get",
    "IndexDef",
    "Item",
    "Key",
    "Put",
    "Query",
    "QueryResult",
    "Scan",
    "SortCondition",
    "SortOp",
    "TableDef",
    "Update",
    "WriteAction",
]

Item = dict[str, Any]
"""An item: attribute name to a Python value (str, int, Decimal, bool, None, bytes, list,
dict, set of str / number / bytes). Floats are refused: numbers are int or Decimal, except
where a read names them in its `floats`."""

Floats = frozenset[str]
"""Top-level number attributes a read answers as float (the nearest double) rather than int
or Decimal: for a reader that takes them as floats anyway, such as a model's float field,
it saves making a Decimal only to turn it back."""

Key = Mapping[str, str]
"""A key: key attribute name to its string value, e.g. {"PK": ..., "SK": ...}. A query's
start key also carries the index's key attributes."""

SortOp = Literal["eq", "begins_with", "between", "lt", "le", "gt", "ge"]


@dataclass(frozen=True, slots=True)
class SortCondition:
    """A condition on the sort key; `high` is the upper bound of `between` (inclusive)."""

    op: SortOp
    value: str
    high: str | None = None

    def holds(self, value: str) -> bool:
        """Whether a sort key of `value` meets the condition."""
        if self.op == "eq":
            return value == self.value
        if self.op == "begins_with":
            return value.startswith(self.value)
        if self.op == "between":
            return self.value <= value <= (self.high or "")
        if self.op == "lt":
            return value < self.value
        if self.op == "le":
            return value <= self.value
        if self.op == "gt":
            return value > self.value
        return value >= self.value


@dataclass(frozen=True, slots=True)
class Get:
    key: Key
    consistent: bool = False
    floats: Floats = frozenset()


@dataclass(frozen=True, slots=True)
class BatchGet:
    """Up to 100 keys; the store returns the found items in any order."""

    keys: tuple[Key, ...]
    floats: Floats = frozenset()


@dataclass(frozen=True, slots=True)
class Query:
    """A Query on the table (index None) or a GSI: partition equality, optional sort condition."""

    partition: str
    index: str | None = None
    sort: SortCondition | None = None
    forward: bool = True
    limit: int | None = None
    start: Key | None = None
    consistent: bool = False
    floats: Floats = frozenset()


@dataclass(frozen=True, slots=True)
class Scan:
    """Every item of the table in segment `segment` of `segments` (DynamoDB's parallel scan),
    optionally only those whose partition key starts with `partition_prefix`. Only table
    migrations scan; serving reads never do."""

    partition_prefix: str | None = None
    segment: int = 0
    segments: int = 1
    limit: int | None = None
    start: Key | None = None
    consistent: bool = False


@dataclass(frozen=True, slots=True)
class Condition:
    """One atom of a write condition; a write's conditions are ANDed. `less_than` holds when
    the attribute is present, of the value's type (a number or a string), and smaller."""

    op: Literal["exists", "not_exists", "equals", "less_than"]
    attribute: str
    value: Any = None


Conditions = tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Put:
    item: Item
    conditions: Conditions = ()


@dataclass(frozen=True, slots=True)
class Update:
    """SET the given attributes, REMOVE others and ADD to numbers (an absent one counts as
    0) on an item (created if absent, as in DynamoDB, unless a condition says otherwise).
    Key attributes cannot be changed."""

    key: Key
    set: Mapping[str, Any] = field(default_factory=dict)
    remove: tuple[str, ...] = ()
    conditions: Conditions = ()
    add: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Delete:
    key: Key
    conditions: Conditions = ()


@dataclass(frozen=True, slots=True)
class Check:
    """A condition check inside a transaction; writes nothing."""

    key: Key
    conditions: Conditions


WriteAction = Put | Update | Delete | Check


@dataclass(frozen=True, slots=True)
class QueryResult:
    items: list[Item]
    last_key: dict[str, str] | None


@dataclass(frozen=True, slots=True)
class IndexDef:
    name: str
    partition_key: str
    sort_key: str | None
    projection: Literal["ALL", "KEYS_ONLY", "INCLUDE"] = "ALL"
    include: tuple[str, ...] = ()


StreamView = Literal["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]
"""What a change stream's records hold besides the keys (DynamoDB's StreamViewType)."""
STREAM_VIEWS: tuple[StreamView, ...] = ("KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES")


def stream_view(value: object) -> StreamView | None:
    """A stored or described stream setting as a StreamView (None or "" for no stream)."""
    if value is None or value == "":
        return None
    for view in STREAM_VIEWS:
        if value == view:
            return view
    raise ValueError(f"unknown stream view type {value!r}")


@dataclass(frozen=True, slots=True)
class TableDef:
    """The table's key schema: every key attribute holds a string."""

    name: str
    partition_key: str
    sort_key: str
    indexes: tuple[IndexDef, ...] = ()
    ttl_attribute: str | None = None
    point_in_time_recovery: bool = False
    stream: StreamView | None = None
    """The table's change stream (None: none)."""

    def index(self, name: str) -> IndexDef:
        for index in self.indexes:
            if index.name == name:
                return index
        raise KeyError(f"table {self.name} has no index {name!r}")

    def primary_key(self, item: Mapping[str, Any]) -> dict[str, str]:
        return {self.partition_key: item[self.partition_key], self.sort_key: item[self.sort_key]}

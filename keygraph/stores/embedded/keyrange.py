"""Key conditions and start keys as SQL over the embedded layout, with DynamoDB's checks."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

from keygraph.errors import ValidationError
from keygraph.plan import Query, Scan, SortCondition, TableDef

from . import validate
from .schema import pk_column, sk_column

_COMPARE = {"eq": "=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def prefix_successor(prefix: str) -> str | None:
    """The least string above every string starting with prefix (code point order is UTF-8
    byte order); None when there is none."""
    chars = list(prefix)
    while chars:
        code = ord(chars[-1]) + 1
        if code == 0xD800:
            code = 0xE000
        if code <= 0x10FFFF:
            chars[-1] = chr(code)
            return "".join(chars)
        chars.pop()
    return None


@dataclass(frozen=True, slots=True)
class QuerySQL:
    where: str
    params: list[str]
    order: str
    key_names: tuple[str, ...]
    """Attribute names of the last evaluated key (table keys, then index keys)."""


def _sort_sql(column: str, sort: SortCondition) -> tuple[str, list[str]]:
    if sort.op == "between":
        if sort.high is None or sort.high.encode() < sort.value.encode():
            raise ValidationError(
                "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound "
                "to be greater than or equal to lower bound"
            )
        return f"{column} BETWEEN ? AND ?", [sort.value, sort.high]
    if sort.op == "begins_with":
        upper = prefix_successor(sort.value)
        if upper is None:
            return f"{column} >= ?", [sort.value]
        return f"{column} >= ? AND {column} < ?", [sort.value, upper]
    return f"{column} {_COMPARE[sort.op]} ?", [sort.value]


def _check_start(
    start: Mapping[str, str], names: tuple[str, ...], partition: tuple[str, str], plan: Query
) -> None:
    if set(start) != set(names) or not all(isinstance(v, str) for v in start.values()):
        if plan.index is None:
            raise ValidationError("Exclusive Start Key must have same size as table's key schema")
        raise ValidationError("The provided starting key is invalid")
    name, value = partition
    sort_name = names[-1] if plan.index is None or len(names) == 4 else None
    if start[name] != value or (
        plan.sort is not None and sort_name is not None and not plan.sort.holds(start[sort_name])
    ):
        raise ValidationError("The provided starting key does not match the range key predicate")


def build(table: TableDef, plan: Query) -> QuerySQL:
    if plan.limit is not None and plan.limit < 1:
        raise ValidationError("Limit must be at least 1")
    direction = "" if plan.forward else " DESC"
    if plan.index is None:
        part_col, sort_col = "pk", "sk"
        order_cols = ["sk"]
        names: tuple[str, ...] = (table.partition_key, table.sort_key)
        partition = (table.partition_key, plan.partition)
    else:
        try:
            index = table.index(plan.index)
        except KeyError as exc:
            raise ValidationError(
                "The table does not have the specified index: " + plan.index
            ) from exc
        if plan.consistent:
            raise ValidationError("Consistent reads are not supported on global secondary indexes")
        if plan.sort is not None and index.sort_key is None:
            raise ValidationError("Query key condition not supported: the index has no sort key")
        part_col, sort_col = pk_column(index), sk_column(index)
        order_cols = ([sort_col] if index.sort_key else []) + ["pk", "sk"]
        names = (table.partition_key, table.sort_key, index.partition_key) + (
            (index.sort_key,) if index.sort_key else ()
        )
        partition = (index.partition_key, plan.partition)
    clauses, params = [f"{part_col} = ?"], [plan.partition]
    if plan.sort is not None:
        validate.sort_condition(plan.sort)
        clause, values = _sort_sql(sort_col, plan.sort)
        clauses.append(clause)
        params += values
    if plan.start is not None:
        _check_start(plan.start, names, partition, plan)
        start_values = [plan.start[n] for n in _order_names(table, plan, names)]
        op = ">" if plan.forward else "<"
        clauses.append(f"({', '.join(order_cols)}) {op} ({', '.join('?' * len(order_cols))})")
        params += start_values
    order = ", ".join(column + direction for column in order_cols)
    return QuerySQL(" AND ".join(clauses), params, order, names)


def _order_names(table: TableDef, plan: Query, names: tuple[str, ...]) -> list[str]:
    """Start-key attributes in the order of the SQL ordering columns."""
    if plan.index is None:
        return [table.sort_key]
    index_sort = [names[3]] if len(names) == 4 else []
    return [*index_sort, table.partition_key, table.sort_key]


SEGMENT_FUNCTION = "kg_segment"
"""The SQL function placing a partition key in a parallel scan's segment."""


def segment_of(partition: str, segments: int) -> int:
    """The segment of a partition key: a stable hash, as DynamoDB spreads partitions."""
    return zlib.crc32(partition.encode()) % segments


def scan(table: TableDef, plan: Scan) -> QuerySQL:
    """A Scan as SQL over the items table (in key order), with DynamoDB's checks."""
    if plan.limit is not None and plan.limit < 1:
        raise ValidationError("Limit must be at least 1")
    if not 0 <= plan.segment < plan.segments <= 1_000_000:
        raise ValidationError("Segment must be at least 0 and less than TotalSegments")
    clauses, params = ["1"], []
    if plan.partition_prefix:
        upper = prefix_successor(plan.partition_prefix)
        clauses.append("pk >= ?")
        params.append(plan.partition_prefix)
        if upper is not None:
            clauses.append("pk < ?")
            params.append(upper)
    if plan.segments > 1:
        clauses.append(f"{SEGMENT_FUNCTION}(pk, {plan.segments}) = {plan.segment}")
    names = (table.partition_key, table.sort_key)
    if plan.start is not None:
        if set(plan.start) != set(names):
            raise ValidationError("Exclusive Start Key must have same size as table's key schema")
        clauses.append("(pk, sk) > (?, ?)")
        params += [plan.start[table.partition_key], plan.start[table.sort_key]]
    return QuerySQL(" AND ".join(clauses), params, "pk, sk", names)

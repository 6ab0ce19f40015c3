"""Plans as DynamoDB expressions: key conditions, write conditions, update expressions, with
every name and value behind a placeholder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from keygraph.errors import ValidationError
from keygraph.plan import Condition, SortCondition

from .wire import AttributeValue, serialize

_COMPARE = {"eq": "=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


class Expressions:
    """Collects placeholders for one request."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, AttributeValue] = {}

    def name(self, attribute: str) -> str:
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = attribute
        return placeholder

    def value(self, value: Any) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = serialize(value)
        return placeholder

    def key_condition(
        self, partition_key: str, partition: str, sort_key: str | None, sort: SortCondition | None
    ) -> str:
        text = f"{self.name(partition_key)} = {self.value(partition)}"
        if sort is None:
            return text
        if sort_key is None:
            raise ValidationError("Query key condition not supported: the index has no sort key")
        name = self.name(sort_key)
        if sort.op == "begins_with":
            return f"{text} AND begins_with({name}, {self.value(sort.value)})"
        if sort.op == "between":
            low, high = self.value(sort.value), self.value(sort.high)
            return f"{text} AND {name} BETWEEN {low} AND {high}"
        return f"{text} AND {name} {_COMPARE[sort.op]} {self.value(sort.value)}"

    def condition(self, conditions: Sequence[Condition]) -> str:
        parts = []
        for condition in conditions:
            name = self.name(condition.attribute)
            if condition.op == "exists":
                parts.append(f"attribute_exists({name})")
            elif condition.op == "not_exists":
                parts.append(f"attribute_not_exists({name})")
            elif condition.op == "less_than":
                parts.append(f"{name} < {self.value(condition.value)}")
            else:
                parts.append(f"{name} = {self.value(condition.value)}")
        return " AND ".join(parts)

    def update(self, set_: Mapping[str, Any], remove: Sequence[str], add: Mapping[str, int]) -> str:
        clauses = []
        if set_:
            assignments = (f"{self.name(k)} = {self.value(v)}" for k, v in set_.items())
            clauses.append("SET " + ", ".join(assignments))
        if remove:
            clauses.append("REMOVE " + ", ".join(self.name(k) for k in remove))
        if add:
            clauses.append(
                "ADD " + ", ".join(f"{self.name(k)} {self.value(v)}" for k, v in add.items())
            )
        return " ".join(clauses)

    def params(self, **expressions: str) -> dict[str, Any]:
        """Request parameters: the non-empty expressions and the placeholders they use."""
        params: dict[str, Any] = {k: v for k, v in expressions.items() if v}
        if self.names:
            params["ExpressionAttributeNames"] = self.names
        if self.values:
            params["ExpressionAttributeValues"] = self.values
        return params

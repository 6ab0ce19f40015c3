"""The least privilege a served API needs, derived from the spec: exactly the DynamoDB
actions its generated code sends, on the table and on the indexes its patterns read. Never
Scan, never a wildcard: a get pattern needs GetItem, a batch get BatchGetItem, a query Query
on its index; writes (TransactWriteItems is authorized by each of its items' actions) read
the item first and put, update or delete it, its claims, copies and counts."""

from __future__ import annotations

from typing import Any

from .resolve import TABLE_INDEX, Resolved

TABLE_ARN = {"Fn::GetAtt": ["Table", "Arn"]}
WRITES = ("GetItem", "PutItem", "UpdateItem", "DeleteItem")
"""What the writes of keygraph.writes send: a consistent read of the item, then one
transaction of puts, updates and deletes."""


def actions(resolved: Resolved) -> tuple[list[str], list[str]]:
    """The actions on the table, and the indexes queried."""
    used: set[str] = set()
    indexes: set[str] = set()
    for pattern in resolved.spec.patterns.values():
        if pattern.operation == "get":
            used.add("GetItem")
        elif pattern.operation == "batch_get":
            used.add("BatchGetItem")
        elif pattern.index == TABLE_INDEX:
            used.add("Query")
        else:
            indexes.add(pattern.index)
    if any(entity.spec.writes for entity in resolved.entities.values()):
        used.update(WRITES)
    return sorted(used), sorted(indexes)


def statements(resolved: Resolved) -> list[dict[str, Any]]:
    """The policy's statements: the table's actions on its ARN, Query on each index read."""
    on_table, indexes = actions(resolved)
    found: list[dict[str, Any]] = []
    if on_table:
        found.append(
            {
                "Sid": "TableItems",
                "Effect": "Allow",
                "Action": [f"dynamodb:{action}" for action in on_table],
                "Resource": TABLE_ARN,
            }
        )
    if indexes:
        found.append(
            {
                "Sid": "IndexQueries",
                "Effect": "Allow",
                "Action": ["dynamodb:Query"],
                "Resource": [{"Fn::Sub": f"${{Table.Arn}}/index/{name}"} for name in indexes],
            }
        )
    return found

"""The least privilege a served API needs, derived from the spec: exactly the DynamoDB
actions its generated code sends, on the table and on the indexes its patterns read. Never
Scan, never a wildcard: a get pattern needs GetItem, a batch get BatchGetItem, a query Query
on its index; a write what keygraph.writes sends for it (TransactWriteItems is authorized
by each of its items' actions); where there are writes, Idempotency-Key's records, only in
their own partitions (`dynamodb:LeadingKeys`); and the read /readyz makes, in its own."""

from __future__ import annotations

from typing import Any

from .resolve import TABLE_INDEX, Entity, Resolved
from .writes import counters_of

TABLE_ARN = {"Fn::GetAtt": ["Table", "Arn"]}
LEDGER = "~KEYGRAPH#IDEMPOTENCY#"
"""The partitions of Idempotency-Key's records (keygraph/serve/idempotency.py PREFIX)."""
LEDGER_ACTIONS = ("DeleteItem", "GetItem", "PutItem", "UpdateItem")
"""What a mutation sent with an Idempotency-Key does to its record: claims it, reads it,
keeps the answer in it, or forgets it."""


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
    for entity in resolved.entities.values():
        used.update(_writing(resolved, entity))
    return sorted(used), sorted(indexes)


def _writing(resolved: Resolved, entity: Entity) -> set[str]:
    """What keygraph.writes sends for the entity's writes: a create puts the item and its
    claims and copies, raises its counts and checks its parents; an update reads the item,
    puts it (updates it where others keep counts on it) and moves what it keeps; a delete
    reads the item, deletes it and what it keeps, and lowers its counts."""
    spec = entity.spec
    keeps, counts = bool(spec.unique or spec.copies), bool(spec.counts)
    found: set[str] = set()
    if "create" in spec.writes:
        found |= {"PutItem"} | ({"UpdateItem"} if counts else set())
        found |= {"ConditionCheckItem"} if spec.requires else set()
    if "update" in spec.writes:
        found |= {"GetItem", "UpdateItem" if counters_of(resolved, entity) else "PutItem"}
        found |= {"PutItem", "DeleteItem"} if keeps else set()
    if "delete" in spec.writes:
        found |= {"GetItem", "DeleteItem"} | ({"UpdateItem"} if counts else set())
    return found


CLEANUP = "~KEYGRAPH#CLEANUP"
"""The partition of the tasks that remove owned items (keygraph/writes/owned.py)."""
CLEANUP_ACTIONS = ("DeleteItem", "PutItem", "Query")
READY = "~KEYGRAPH#READY"
"""The partition /readyz reads to see the table answer (keygraph/serve/spoken.py PROBE)."""


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
    if any(entity.spec.writes for entity in resolved.entities.values()):
        found.append(_within("IdempotencyRecords", LEDGER_ACTIONS, f"{LEDGER}*"))
    if any(entity.spec.owns for entity in resolved.entities.values()):
        found.append(_within("CleanupTasks", CLEANUP_ACTIONS, CLEANUP))
    found.append(_within("ReadinessProbe", ("GetItem",), READY))
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


def _within(sid: str, actions: tuple[str, ...], leading: str) -> dict[str, Any]:
    """A statement allowing `actions` on the table's items whose partition key is like
    `leading` (keygraph's own partitions)."""
    return {
        "Sid": sid,
        "Effect": "Allow",
        "Action": [f"dynamodb:{action}" for action in actions],
        "Resource": TABLE_ARN,
        "Condition": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [leading]}},
    }

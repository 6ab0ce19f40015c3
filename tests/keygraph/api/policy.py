"""What a served API's DynamoDB calls need from IAM, checked against its generated stack's
policy (stack.json): each call recorded as the actions it needs, the way IAM authorizes them
(a transaction by each of its items' actions, a keyed call with its partition key for
`dynamodb:LeadingKeys`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from keygraph.stores.dynamodb.store import DynamoDBStore
from tests.keygraph.api.conftest import Compiled

UNSERVED = frozenset({"Scan", "CreateTable", "DeleteTable", "DescribeTable"})
"""Calls the tests make themselves (reading every item back, tables), not the API."""


Call = tuple[str, str, str | None, str | None]
"""An action a DynamoDB call needs: (action, table, index or None, the partition key it
writes or reads by key, when it has one)."""


def needed(operation: str, params: dict[str, Any]) -> list[Call]:
    """The actions a call needs, as IAM authorizes it: a transaction by each of its items'."""
    if operation == "TransactWriteItems":
        names = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem"}
        names["ConditionCheck"] = "ConditionCheckItem"
        return [
            (names[kind], body["TableName"], None, _leading(body))
            for item in params["TransactItems"]
            for kind, body in item.items()
        ]
    if operation == "BatchGetItem":
        return [(operation, table, None, None) for table in params["RequestItems"]]
    return [(operation, params["TableName"], params.get("IndexName"), _leading(params))]


def _leading(params: dict[str, Any]) -> str | None:
    """The partition key a keyed call names (wire format: {"S": value}), else None."""
    keyed = params.get("Key") or params.get("Item") or {}
    value = keyed.get("PK")
    return None if value is None else str(value["S"])


def allowed(stack: dict[str, Any], call: Call) -> bool:
    """Whether the function's policy allows the call on the stack's table (its only one)."""
    action, _table, index, leading = call
    (policy,) = stack["Resources"]["Function"]["Properties"]["Policies"]
    for statement in policy["Statement"]:
        if not _holds(statement.get("Condition"), leading):
            continue
        resources = statement["Resource"]
        resources = resources if isinstance(resources, list) else [resources]
        names = [r.get("Fn::Sub", "") for r in resources]
        on = (
            f"${{Table.Arn}}/index/{index}" in names
            if index
            else {"Fn::GetAtt": ["Table", "Arn"]} in resources
        )
        if statement["Effect"] == "Allow" and f"dynamodb:{action}" in statement["Action"] and on:
            return True
    return False


def _holds(condition: dict[str, Any] | None, leading: str | None) -> bool:
    """Whether a statement's condition (none, or on the leading keys) holds for the call."""
    if condition is None:
        return True
    (patterns,) = condition["ForAllValues:StringLike"].values()
    return leading is not None and any(leading.startswith(p.rstrip("*")) for p in patterns)


def recording(monkeypatch: pytest.MonkeyPatch) -> list[Call]:
    """The actions every DynamoDB store's calls need from now on, but the tests' own."""
    calls: list[Call] = []
    original = DynamoDBStore._call

    async def recorded(self: DynamoDBStore, operation: str, params: dict[str, Any]) -> Any:
        if operation not in UNSERVED:
            calls.extend(needed(operation, params))
        return await original(self, operation, params)

    monkeypatch.setattr(DynamoDBStore, "_call", recorded)
    return calls


def stack_of(package: Compiled) -> dict[str, Any]:
    """The package's generated stack."""
    found: dict[str, Any] = json.loads(
        (Path(str(package.package.__file__)).parent / "stack.json").read_text()
    )
    return found

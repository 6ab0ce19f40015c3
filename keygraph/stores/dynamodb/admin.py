"""Table administration against DynamoDB: create a table from a TableDef, describe a live
table, and say in words how a live table differs from its definition."""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import ClientError

from keygraph.plan import IndexDef, TableDef


def _key_schema(partition_key: str, sort_key: str | None) -> list[dict[str, str]]:
    schema = [{"AttributeName": partition_key, "KeyType": "HASH"}]
    if sort_key:
        schema.append({"AttributeName": sort_key, "KeyType": "RANGE"})
    return schema


def _projection(index: IndexDef) -> dict[str, Any]:
    projection: dict[str, Any] = {"ProjectionType": index.projection}
    if index.projection == "INCLUDE":
        projection["NonKeyAttributes"] = list(index.include)
    return projection


def create_request(table: TableDef) -> dict[str, Any]:
    """The CreateTable request for a table definition (on-demand billing)."""
    names = {table.partition_key, table.sort_key}
    for index in table.indexes:
        names.add(index.partition_key)
        if index.sort_key:
            names.add(index.sort_key)
    request: dict[str, Any] = {
        "TableName": table.name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": "S"} for name in sorted(names)
        ],
        "KeySchema": _key_schema(table.partition_key, table.sort_key),
    }
    if table.indexes:
        request["GlobalSecondaryIndexes"] = [
            {
                "IndexName": index.name,
                "KeySchema": _key_schema(index.partition_key, index.sort_key),
                "Projection": _projection(index),
            }
            for index in table.indexes
        ]
    return request


def create_table(client: Any, table: TableDef, wait: bool = True, timeout: float = 120) -> None:
    """Create the table (and its TTL setting); with `wait`, return once it is ACTIVE."""
    client.create_table(**create_request(table))
    if wait:
        deadline = time.monotonic() + timeout
        while describe(client, table.name).get("TableStatus") != "ACTIVE":
            if time.monotonic() > deadline:
                raise TimeoutError(f"table {table.name} is not ACTIVE after {timeout:.0f} s")
            time.sleep(0.2)
    if table.ttl_attribute:
        client.update_time_to_live(
            TableName=table.name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": table.ttl_attribute},
        )


def delete_table(client: Any, name: str) -> None:
    client.delete_table(TableName=name)


def describe(client: Any, name: str) -> dict[str, Any]:
    """The live table description; an empty dict when the table does not exist."""
    try:
        table: dict[str, Any] = client.describe_table(TableName=name)["Table"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            return {}
        raise
    return table


def _keys(schema: list[dict[str, str]]) -> tuple[str | None, str | None]:
    by_type = {k["KeyType"]: k["AttributeName"] for k in schema}
    return by_type.get("HASH"), by_type.get("RANGE")


def _index_differences(wanted: IndexDef, live: dict[str, Any]) -> list[str]:
    problems = []
    live_keys = _keys(live["KeySchema"])
    if live_keys != (wanted.partition_key, wanted.sort_key):
        problems.append(
            f"GSI {wanted.name} has key schema {live_keys}, expected "
            f"{(wanted.partition_key, wanted.sort_key)}"
        )
    projection = live.get("Projection", {})
    live_type = projection.get("ProjectionType", "ALL")
    if live_type != wanted.projection:
        problems.append(f"GSI {wanted.name} projects {live_type}, expected {wanted.projection}")
    elif wanted.projection == "INCLUDE":
        live_include = sorted(projection.get("NonKeyAttributes", []))
        if live_include != sorted(wanted.include):
            problems.append(
                f"GSI {wanted.name} includes {live_include}, expected {sorted(wanted.include)}"
            )
    return problems


def diff(client: Any, table: TableDef) -> list[str]:
    """How the live table differs from the definition, one sentence per difference; an
    empty list when they agree."""
    live = describe(client, table.name)
    if not live:
        return [f"table {table.name} does not exist"]
    problems = []
    live_keys = _keys(live["KeySchema"])
    if live_keys != (table.partition_key, table.sort_key):
        problems.append(
            f"table {table.name} has key schema {live_keys}, expected "
            f"{(table.partition_key, table.sort_key)}"
        )
    types = {a["AttributeName"]: a["AttributeType"] for a in live["AttributeDefinitions"]}
    for name, kind in sorted(types.items()):
        if kind != "S":
            problems.append(f"key attribute {name} has type {kind}, expected S (string)")
    live_indexes = {i["IndexName"]: i for i in live.get("GlobalSecondaryIndexes", [])}
    for index in table.indexes:
        if index.name not in live_indexes:
            problems.append(f"GSI {index.name} is missing")
        else:
            problems += _index_differences(index, live_indexes[index.name])
    wanted = {index.name for index in table.indexes}
    problems += [
        f"GSI {name} is not in the definition"
        for name in sorted(live_indexes)
        if name not in wanted
    ]
    if table.ttl_attribute:
        ttl = client.describe_time_to_live(TableName=table.name)["TimeToLiveDescription"]
        if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING") or (
            ttl.get("AttributeName") != table.ttl_attribute
        ):
            problems.append(f"TTL is not enabled on attribute {table.ttl_attribute}")
    return problems

"""Table administration on DynamoDB Local, and finding DynamoDB Local itself."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from keygraph.plan import IndexDef
from keygraph.stores.dynamodb import admin, local
from keygraph.stores.testing import TEST_TABLE, unique_table


@pytest.mark.dynamodb_local
def test_create_describe_and_diff(dynamodb_client: Any) -> None:
    table = unique_table(dataclasses.replace(TEST_TABLE, ttl_attribute="expires_at"))
    assert admin.diff(dynamodb_client, table) == [f"table {table.name} does not exist"]
    admin.create_table(dynamodb_client, table)
    try:
        live = admin.describe(dynamodb_client, table.name)
        assert live["TableStatus"] == "ACTIVE"
        assert admin.diff(dynamodb_client, table) == []
        changed = dataclasses.replace(
            table,
            sort_key="SORT",
            indexes=(
                IndexDef("GSI1", "GSI1PK", "OTHER"),
                IndexDef("Sparse", "SPK", "SSK", "KEYS_ONLY"),
                IndexDef("GSI9", "X", "Y"),
            ),
            ttl_attribute="gone_at",
        )
        problems = admin.diff(dynamodb_client, changed)
        assert any("key schema" in p and table.name in p for p in problems)
        assert any(p.startswith("GSI GSI1 has key schema") for p in problems)
        assert "GSI Sparse projects INCLUDE, expected KEYS_ONLY" in problems
        assert "GSI GSI9 is missing" in problems
        assert "TTL is not enabled on attribute gone_at" in problems
        fewer = dataclasses.replace(table, indexes=table.indexes[:1])
        assert admin.diff(dynamodb_client, fewer) == ["GSI Sparse is not in the definition"]
        include = dataclasses.replace(
            table, indexes=(table.indexes[0], IndexDef("Sparse", "SPK", "SSK", "INCLUDE", ("x",)))
        )
        assert admin.diff(dynamodb_client, include) == [
            "GSI Sparse includes ['status'], expected ['x']"
        ]
    finally:
        admin.delete_table(dynamodb_client, table.name)


def test_create_request_declares_every_key_attribute() -> None:
    request = admin.create_request(TEST_TABLE)
    declared = {a["AttributeName"] for a in request["AttributeDefinitions"]}
    assert declared == {"PK", "SK", "GSI1PK", "GSI1SK", "SPK", "SSK"}
    sparse = request["GlobalSecondaryIndexes"][1]
    assert sparse["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["status"]}


def test_jar_override_must_exist(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(local.JAR_ENV, str(tmp_path / "missing.jar"))
    with pytest.raises(local.LocalUnavailable, match="make dynamodb-local"):
        local.find_jar()
    jar = tmp_path / "DynamoDBLocal.jar"
    jar.write_bytes(b"")
    monkeypatch.setenv(local.JAR_ENV, str(jar))
    assert local.find_jar() == jar


def test_missing_java_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    with pytest.raises(local.LocalUnavailable, match="Java runtime"):
        local.find_java()

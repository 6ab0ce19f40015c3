"""Table administration on DynamoDB Local, and finding DynamoDB Local itself."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from keygraph.stores.dynamodb import admin, local
from testkit.stores import TEST_TABLE, unique_table


@pytest.mark.dynamodb_local
def test_a_table_is_created_as_defined(dynamodb_client: Any) -> None:
    table = unique_table(dataclasses.replace(TEST_TABLE, ttl_attribute="expires_at"))
    live_admin = admin.DynamoDBAdmin(dynamodb_client, table)
    assert live_admin.describe() is None
    admin.create_table(dynamodb_client, table)
    try:
        live = live_admin.describe()
        assert live is not None
        assert (live.partition_key, live.sort_key) == ("PK", "SK")
        assert {name: found.index for name, found in live.indexes.items()} == {
            index.name: index for index in table.indexes
        }
        assert live.ttl_attribute == "expires_at"
        assert live.point_in_time_recovery is None  # DynamoDB Local has no backups
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

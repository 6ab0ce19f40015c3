"""Table administration against DynamoDB (boto3's control plane): create a table from a
TableDef, describe it, add and remove indexes one UpdateTable at a time, TTL,
point-in-time recovery and the change stream (`DynamoDBAdmin`, the TableAdmin of this store)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from keygraph.admin import IndexStatus, LiveIndex, LiveTable
from keygraph.errors import StoreUnavailable
from keygraph.plan import IndexDef, StreamView, TableDef, stream_view

from .errors import CREDENTIAL_CODES, CREDENTIALS_REFUSED

P = ParamSpec("P")
R = TypeVar("R")


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
    if table.stream:
        request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": table.stream}
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
    """Create the table (and its TTL and backup settings); with `wait`, return once it is
    ACTIVE."""
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
    if table.point_in_time_recovery:
        try:
            client.update_continuous_backups(
                TableName=table.name,
                PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True},
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "UnknownOperationException":
                raise  # DynamoDB Local has no backups: the table is made without


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


WAIT_TIMEOUT = 600.0
"""Seconds to wait for an index to become ACTIVE or go (a large table backfills for long)."""


def _index_def(live: dict[str, Any]) -> IndexDef:
    partition_key, sort_key = _keys(live["KeySchema"])
    projection = live.get("Projection", {})
    return IndexDef(
        live["IndexName"],
        str(partition_key),
        sort_key,
        projection.get("ProjectionType", "ALL"),
        tuple(projection.get("NonKeyAttributes", ())),
    )


def _mapped(operation: Callable[P, R]) -> Callable[P, R]:
    """The operation with botocore's exceptions raised as the store's: refused credentials
    saying what to check, anything else StoreUnavailable naming the call."""

    @functools.wraps(operation)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return operation(*args, **kwargs)
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code, message = error.get("Code", "?"), error.get("Message", "")
            if code in CREDENTIAL_CODES:
                raise StoreUnavailable(
                    f"DynamoDB refused {operation.__name__} ({code}: {message}); "
                    f"{CREDENTIALS_REFUSED}"
                ) from exc
            raise StoreUnavailable(f"DynamoDB {operation.__name__}: {code}: {message}") from exc
        except BotoCoreError as exc:
            raise StoreUnavailable(f"DynamoDB {operation.__name__}: {exc}") from exc

    return call


class DynamoDBAdmin:
    """The control plane of one DynamoDB table through a boto3 client; botocore's errors
    are raised as StoreUnavailable."""

    def __init__(self, client: Any, table: TableDef, poll: float = 0.2) -> None:
        self.client = client
        self.table = table
        self.poll = poll

    @_mapped
    def describe(self) -> LiveTable | None:
        live = describe(self.client, self.table.name)
        if not live:
            return None
        partition_key, sort_key = _keys(live["KeySchema"])
        indexes = {
            index["IndexName"]: LiveIndex(
                _index_def(index), _status(index.get("IndexStatus", "ACTIVE"))
            )
            for index in live.get("GlobalSecondaryIndexes", [])
        }
        ttl = self.client.describe_time_to_live(TableName=self.table.name)["TimeToLiveDescription"]
        enabled = ttl.get("TimeToLiveStatus") in ("ENABLED", "ENABLING")
        return LiveTable(
            name=self.table.name,
            partition_key=str(partition_key),
            sort_key=sort_key,
            indexes=indexes,
            ttl_attribute=ttl.get("AttributeName") if enabled else None,
            point_in_time_recovery=self._point_in_time_recovery(),
            stream=_stream_view(live),
        )

    def _point_in_time_recovery(self) -> bool | None:
        try:
            backups = self.client.describe_continuous_backups(TableName=self.table.name)
        except ClientError:
            return None  # not offered by this endpoint (DynamoDB Local)
        description = backups["ContinuousBackupsDescription"]
        status = description.get("PointInTimeRecoveryDescription", {})
        return bool(status.get("PointInTimeRecoveryStatus") == "ENABLED")

    @_mapped
    def create_table(self) -> None:
        create_table(self.client, self.table)

    def _wait(self, done: Any, what: str) -> None:
        deadline = time.monotonic() + WAIT_TIMEOUT
        while not done(describe(self.client, self.table.name)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} after {WAIT_TIMEOUT:.0f} s")
            time.sleep(self.poll)

    @_mapped
    def create_index(self, index: IndexDef) -> None:
        names = [index.partition_key, *([index.sort_key] if index.sort_key else [])]
        self.client.update_table(
            TableName=self.table.name,
            AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in names],
            GlobalSecondaryIndexUpdates=[
                {
                    "Create": {
                        "IndexName": index.name,
                        "KeySchema": _key_schema(index.partition_key, index.sort_key),
                        "Projection": _projection(index),
                    }
                }
            ],
        )

        def active(live: dict[str, Any]) -> bool:
            found = [
                i for i in live.get("GlobalSecondaryIndexes", []) if i["IndexName"] == index.name
            ]
            return (
                bool(found)
                and found[0].get("IndexStatus") == "ACTIVE"
                and not found[0].get("Backfilling", False)
            )

        self._wait(active, f"index {index.name} is not ACTIVE")

    @_mapped
    def delete_index(self, name: str) -> None:
        self.client.update_table(
            TableName=self.table.name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": name}}]
        )

        def gone(live: dict[str, Any]) -> bool:
            return all(i["IndexName"] != name for i in live.get("GlobalSecondaryIndexes", []))

        self._wait(gone, f"index {name} is still there")

    @_mapped
    def set_ttl(self, attribute: str | None) -> None:
        current = self.client.describe_time_to_live(TableName=self.table.name)
        old = current["TimeToLiveDescription"].get("AttributeName")
        enabled = current["TimeToLiveDescription"].get("TimeToLiveStatus") in (
            "ENABLED",
            "ENABLING",
        )
        if enabled and old != attribute:
            self.client.update_time_to_live(
                TableName=self.table.name,
                TimeToLiveSpecification={"Enabled": False, "AttributeName": old},
            )
        if attribute is not None:
            self.client.update_time_to_live(
                TableName=self.table.name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": attribute},
            )

    @_mapped
    def set_point_in_time_recovery(self, enabled: bool) -> None:
        self.client.update_continuous_backups(
            TableName=self.table.name,
            PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": enabled},
        )

    @_mapped
    def set_stream(self, view: StreamView | None) -> None:
        current = _stream_view(describe(self.client, self.table.name))
        if current == view:
            return
        if current is not None:
            self._update_stream({"StreamEnabled": False})
        if view is not None:
            self._update_stream({"StreamEnabled": True, "StreamViewType": view})

    def _update_stream(self, specification: dict[str, Any]) -> None:
        self.client.update_table(TableName=self.table.name, StreamSpecification=specification)
        self._wait(lambda live: live.get("TableStatus") == "ACTIVE", "the table is not ACTIVE")

    @_mapped
    def count(self, partition_prefix: str | None = None) -> int | None:
        """DynamoDB's item count of the whole table (it refreshes about every six hours);
        None for a prefix, which only a scan could count."""
        if partition_prefix:
            return None
        live = describe(self.client, self.table.name)
        return int(live["ItemCount"]) if live and "ItemCount" in live else None


def _stream_view(live: dict[str, Any]) -> StreamView | None:
    """The view of a described table's change stream; None when it has none."""
    specification = live.get("StreamSpecification", {})
    if not specification.get("StreamEnabled"):
        return None
    return stream_view(specification.get("StreamViewType"))


def _status(text: str) -> IndexStatus:
    if text in ("CREATING", "ACTIVE", "DELETING", "UPDATING"):
        return text  # type: ignore[return-value]
    raise ValueError(f"unknown index status {text!r}")

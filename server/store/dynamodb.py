"""The DynamoDB store: one boto3 low-level client per process, blocking calls in a bounded
thread pool, our own retries (throttling, transient errors, unprocessed keys) and errors
mapped to the protocol's."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    HTTPClientError,
    ParamValidationError,
)
from botocore.exceptions import ConnectionError as EndpointError

from generated.runtime.errors import (
    CancelReason,
    ConditionFailed,
    StoreUnavailable,
    TransactionCanceled,
    ValidationError,
)
from generated.runtime.plan import (
    BatchGet,
    Check,
    Delete,
    Get,
    Item,
    Put,
    Query,
    QueryResult,
    TableDef,
    Update,
    WriteAction,
)

from .expressions import Expressions
from .retry import RETRYABLE_CANCEL_CODES, RETRYABLE_CODES, RetryPolicy
from .wire import deserialize_item, deserialize_key, serialize_item, serialize_key

_ALL_OLD = {"ReturnValuesOnConditionCheckFailure": "ALL_OLD"}


def make_client(
    endpoint_url: str | None = None,
    region: str | None = None,
    max_connections: int = 64,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
    connect_timeout: float = 2.0,
    read_timeout: float = 10.0,
) -> Any:
    """A low-level DynamoDB client whose pool fits `max_connections` concurrent calls and
    which never retries on its own (the store does)."""
    config = Config(
        max_pool_connections=max_connections,
        retries={"total_max_attempts": 1},
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        parameter_validation=False,
        tcp_keepalive=True,
    )
    session = boto3.session.Session()
    return session.client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name=region,
        aws_access_key_id=access_key_id,
        aws_secret_access_key=secret_access_key,
        config=config,
    )


def _cancel_reasons(response: Mapping[str, Any]) -> tuple[CancelReason, ...]:
    return tuple(
        CancelReason(r.get("Code", "None"), deserialize_item(r["Item"]) if "Item" in r else None)
        for r in response.get("CancellationReasons", ())
    )


def map_error(exc: ClientError) -> Exception:
    """The protocol's error for a DynamoDB error that will not be retried."""
    error = exc.response.get("Error", {})
    code, message = error.get("Code", ""), error.get("Message", str(exc))
    if code == "ConditionalCheckFailedException":
        item: Any = exc.response.get("Item")
        return ConditionFailed(message, deserialize_item(item) if item else None)
    if code == "TransactionCanceledException":
        return TransactionCanceled(message, _cancel_reasons(exc.response))
    if code in {"ValidationException", "SerializationException"}:
        return ValidationError(message)
    return StoreUnavailable(f"DynamoDB {code}: {message}")


def _retryable(exc: ClientError) -> bool:
    code = exc.response.get("Error", {}).get("Code", "")
    if code == "TransactionCanceledException":
        codes = {r.code for r in _cancel_reasons(exc.response)} - {"None"}
        return bool(codes) and codes <= RETRYABLE_CANCEL_CODES
    return code in RETRYABLE_CODES


class DynamoDBStore:
    """The Store protocol over a DynamoDB table (AWS, DynamoDB Local or any compatible URL).

    Pass `client` to share one client between stores; otherwise one is made from the
    endpoint, region and credentials given (credentials None: boto3's usual chain).
    """

    def __init__(
        self,
        table: TableDef,
        *,
        client: Any = None,
        endpoint_url: str | None = None,
        region: str | None = None,
        max_concurrency: int = 64,
        retry: RetryPolicy | None = None,
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
    ) -> None:
        self.table = table
        self._owns_client = client is None
        self.client = client or make_client(
            endpoint_url, region, max_concurrency, access_key_id, secret_access_key
        )
        self.retry = retry or RetryPolicy()
        self._pool = ThreadPoolExecutor(max_concurrency, thread_name_prefix="dynamodb")

    async def _call(self, method: Callable[..., dict[str, Any]], **params: Any) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        attempt = 1
        while True:
            try:
                return await loop.run_in_executor(self._pool, functools.partial(method, **params))
            except ClientError as exc:
                if not _retryable(exc):
                    raise map_error(exc) from exc
                failure: Exception = exc
            except ParamValidationError as exc:
                raise ValidationError(str(exc)) from exc
            except (EndpointError, HTTPClientError) as exc:
                failure = exc
            except BotoCoreError as exc:
                raise StoreUnavailable(f"DynamoDB client error: {exc}") from exc
            if attempt >= self.retry.max_attempts:
                raise StoreUnavailable(
                    f"DynamoDB unavailable after {attempt} attempts: {failure}"
                ) from failure
            await asyncio.sleep(self.retry.delay(attempt))
            attempt += 1

    async def _backoff(self, attempt: int, what: str) -> None:
        if attempt >= self.retry.max_attempts:
            raise StoreUnavailable(f"DynamoDB left {what} unprocessed after {attempt} attempts")
        await asyncio.sleep(self.retry.delay(attempt))

    # reads

    async def get(self, plan: Get) -> Item | None:
        params: dict[str, Any] = {"TableName": self.table.name, "Key": serialize_key(plan.key)}
        if plan.consistent:
            params["ConsistentRead"] = True
        response = await self._call(self.client.get_item, **params)
        item = response.get("Item")
        return deserialize_item(item) if item is not None else None

    async def batch_get(self, plan: BatchGet) -> list[Item]:
        name = self.table.name
        request: dict[str, Any] = {name: {"Keys": [serialize_key(k) for k in plan.keys]}}
        items: list[Item] = []
        attempt = 1
        while True:
            response = await self._call(self.client.batch_get_item, RequestItems=request)
            items += (deserialize_item(i) for i in response.get("Responses", {}).get(name, ()))
            request = response.get("UnprocessedKeys") or {}
            if not request:
                return items
            await self._backoff(attempt, "keys")
            attempt += 1

    async def query(self, plan: Query) -> QueryResult:
        partition_key, sort_key = self.table.partition_key, self.table.sort_key
        if plan.index is not None:
            try:
                index = self.table.index(plan.index)
            except KeyError as exc:
                raise ValidationError(str(exc)) from exc
            partition_key = index.partition_key
        ex = Expressions()
        sort_name = sort_key if plan.index is None else index.sort_key
        condition = ex.key_condition(partition_key, plan.partition, sort_name, plan.sort)
        params = ex.params(KeyConditionExpression=condition)
        params["TableName"] = self.table.name
        if plan.index is not None:
            params["IndexName"] = plan.index
        if not plan.forward:
            params["ScanIndexForward"] = False
        if plan.limit is not None:
            params["Limit"] = plan.limit
        if plan.start is not None:
            params["ExclusiveStartKey"] = serialize_key(plan.start)
        if plan.consistent:
            params["ConsistentRead"] = True
        response = await self._call(self.client.query, **params)
        last = response.get("LastEvaluatedKey")
        return QueryResult(
            [deserialize_item(i) for i in response.get("Items", ())],
            deserialize_key(last) if last else None,
        )

    # writes

    def _put_params(self, plan: Put) -> dict[str, Any]:
        ex = Expressions()
        params = ex.params(ConditionExpression=ex.condition(plan.conditions))
        params.update(TableName=self.table.name, Item=serialize_item(plan.item))
        if plan.conditions:
            params.update(_ALL_OLD)
        return params

    def _update_params(self, plan: Update) -> dict[str, Any]:
        ex = Expressions()
        params = ex.params(
            UpdateExpression=ex.update(plan.set, plan.remove),
            ConditionExpression=ex.condition(plan.conditions),
        )
        params.update(TableName=self.table.name, Key=serialize_key(plan.key))
        if plan.conditions:
            params.update(_ALL_OLD)
        return params

    def _keyed_params(self, plan: Delete | Check) -> dict[str, Any]:
        if isinstance(plan, Check) and not plan.conditions:
            raise ValidationError("A condition check needs a condition")
        ex = Expressions()
        params = ex.params(ConditionExpression=ex.condition(plan.conditions))
        params.update(TableName=self.table.name, Key=serialize_key(plan.key))
        if plan.conditions:
            params.update(_ALL_OLD)
        return params

    async def put(self, plan: Put) -> None:
        await self._call(self.client.put_item, **self._put_params(plan))

    async def update(self, plan: Update) -> Item:
        params = self._update_params(plan)
        response = await self._call(self.client.update_item, ReturnValues="ALL_NEW", **params)
        return deserialize_item(response.get("Attributes", {}))

    async def delete(self, plan: Delete) -> None:
        await self._call(self.client.delete_item, **self._keyed_params(plan))

    async def batch_write(self, actions: Sequence[Put | Delete]) -> None:
        if any(action.conditions for action in actions):
            raise ValidationError("BatchWriteItem does not take conditions")
        requests = [
            {"PutRequest": {"Item": serialize_item(a.item)}}
            if isinstance(a, Put)
            else {"DeleteRequest": {"Key": serialize_key(a.key)}}
            for a in actions
        ]
        request: dict[str, Any] = {self.table.name: requests}
        attempt = 1
        while True:
            response = await self._call(self.client.batch_write_item, RequestItems=request)
            request = response.get("UnprocessedItems") or {}
            if not request:
                return
            await self._backoff(attempt, "writes")
            attempt += 1

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        items: list[dict[str, Any]] = []
        for action in actions:
            if isinstance(action, Put):
                items.append({"Put": self._put_params(action)})
            elif isinstance(action, Update):
                items.append({"Update": self._update_params(action)})
            elif isinstance(action, Delete):
                items.append({"Delete": self._keyed_params(action)})
            else:
                items.append({"ConditionCheck": self._keyed_params(action)})
        await self._call(self.client.transact_write_items, TransactItems=items)

    async def close(self) -> None:
        self._pool.shutdown(wait=True)
        if self._owns_client:
            self.client.close()

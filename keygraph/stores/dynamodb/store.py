"""The DynamoDB store: data-plane calls as signed JSON POSTs over our own transport (no
botocore request pipeline) on the event loop's keep-alive connections, our own retries
(throttling, transient errors, unprocessed keys) and errors mapped to the protocol's. A boto3
client remains for the control plane (table administration)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any

from keygraph import capacity
from keygraph.errors import ValidationError
from keygraph.plan import (
    BatchGet,
    Check,
    Delete,
    Floats,
    Get,
    Item,
    Put,
    Query,
    QueryResult,
    Scan,
    TableDef,
    Update,
    WriteAction,
)

from ..arguments import require_table
from .connect import make_client, make_transport, transport_for
from .connections import IDLE_TIMEOUT
from .expressions import Expressions
from .retry import READS, Attempts, RetryBudget, RetryPolicy, unprocessed_wait
from .transport import ServiceError, TransientError, Transport
from .wire import deserialize_item, deserialize_key, serialize_item, serialize_key

__all__ = ["DynamoDBStore", "make_client"]  # make_client: callers' control-plane client

_ALL_OLD = {"ReturnValuesOnConditionCheckFailure": "ALL_OLD"}


def _meter(operation: str, consumed: Any) -> None:
    """Count the capacity a call's answer reports (one entry, or a list for batches and
    transactions) against the open meter."""
    entries = consumed if isinstance(consumed, list) else [consumed] if consumed else []
    units = sum(float(entry.get("CapacityUnits", 0)) for entry in entries)
    if operation in READS:
        capacity.add(read_units=units)
    else:
        capacity.add(write_units=units)


class DynamoDBStore:
    """The Store protocol over a DynamoDB table (AWS, DynamoDB Local or any compatible URL):
    the table first, everything else by name. `DynamoDBStore(TABLE, region="eu-west-1")`
    for AWS (credentials and region from botocore's usual chain when not given);
    `DynamoDBStore(TABLE, endpoint_url="http://localhost:8000")` for DynamoDB Local, which
    needs no AWS configuration (connect.py). A missing region or credentials raises
    StoreNotConfigured here, saying what to set.

    Data-plane calls go through `transport`: pass one to share it, or a boto3 `client` from
    `make_client` to talk to its endpoint with its credentials; otherwise one is made from
    the settings given, its connections closed once idle for `idle_timeout` seconds
    (connections.py). `client` is the control-plane client (made on first use when not
    given). Failed calls are retried under `retry` and `budget` (retry.py; a fresh budget
    per store when none is given).
    """

    def __init__(
        self,
        table: TableDef,
        *,
        client: Any = None,
        transport: Transport | None = None,
        endpoint_url: str | None = None,
        region: str | None = None,
        max_concurrency: int = 64,
        retry: RetryPolicy | None = None,
        budget: RetryBudget | None = None,
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        require_table(type(self).__name__, table)
        self.table = table
        self._client = client
        self._owns_client = client is None
        self._client_args = (
            endpoint_url,
            region,
            max_concurrency,
            access_key_id,
            secret_access_key,
        )
        self._owns_transport = transport is None
        if transport is None:
            transport = (
                transport_for(client, max_concurrency, idle_timeout)
                if client is not None
                else make_transport(
                    endpoint_url,
                    region,
                    max_concurrency,
                    access_key_id,
                    secret_access_key,
                    idle_timeout,
                )
            )
        self.transport = transport
        self.retry = retry or RetryPolicy()
        self.budget = budget or RetryBudget()

    @property
    def client(self) -> Any:
        """The boto3 client for table administration."""
        if self._client is None:
            self._client = make_client(*self._client_args)
        return self._client

    async def _call(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        """`operation`, retried as retry.py's rule, the policy, the retry budget and the
        request's deadline allow. The deadline also cancels the waits as the calls."""
        metered = capacity.active()
        if metered:
            params = {**params, "ReturnConsumedCapacity": "TOTAL"}
        attempts = Attempts(self.retry, self.budget, operation, params)
        while True:
            try:
                response: dict[str, Any] = await self.transport.call(
                    operation, params, fresh=attempts.fresh
                )
            except (ServiceError, TransientError) as exc:
                wait = attempts.failed(exc)
                if wait:
                    await asyncio.sleep(wait)
                continue
            attempts.succeeded()
            if metered:
                _meter(operation, response.get("ConsumedCapacity"))
            return response

    async def _backoff(self, attempt: int, what: str) -> None:
        await asyncio.sleep(unprocessed_wait(self.retry, attempt, what))

    # reads

    async def get(self, plan: Get) -> Item | None:
        params: dict[str, Any] = {"TableName": self.table.name, "Key": serialize_key(plan.key)}
        if plan.consistent:
            params["ConsistentRead"] = True
        response = await self._call("GetItem", params)
        item = response.get("Item")
        return deserialize_item(item, plan.floats) if item is not None else None

    async def batch_get(self, plan: BatchGet) -> list[Item]:
        name = self.table.name
        request: dict[str, Any] = {name: {"Keys": [serialize_key(k) for k in plan.keys]}}
        items: list[Item] = []
        attempt = 1
        while True:
            response = await self._call("BatchGetItem", {"RequestItems": request})
            found = response.get("Responses", {}).get(name, ())
            items += (deserialize_item(i, plan.floats) for i in found)
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
        return await self._page("Query", params, plan, plan.floats)

    async def scan(self, plan: Scan) -> QueryResult:
        params: dict[str, Any] = {"TableName": self.table.name}
        if plan.partition_prefix:
            ex = Expressions()
            name, value = ex.name(self.table.partition_key), ex.value(plan.partition_prefix)
            params.update(ex.params(FilterExpression=f"begins_with({name}, {value})"))
        if plan.segments > 1:
            params.update(Segment=plan.segment, TotalSegments=plan.segments)
        return await self._page("Scan", params, plan)

    async def _page(
        self,
        operation: str,
        params: dict[str, Any],
        plan: Query | Scan,
        floats: Floats = frozenset(),
    ) -> QueryResult:
        """A Query's or Scan's page: `params` with the plan's limit, start and consistency."""
        if plan.limit is not None:
            params["Limit"] = plan.limit
        if plan.start is not None:
            params["ExclusiveStartKey"] = serialize_key(plan.start)
        if plan.consistent:
            params["ConsistentRead"] = True
        response = await self._call(operation, params)
        last = response.get("LastEvaluatedKey")
        return QueryResult(
            [deserialize_item(i, floats) for i in response.get("Items", ())],
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
            UpdateExpression=ex.update(plan.set, plan.remove, plan.add),
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
        await self._call("PutItem", self._put_params(plan))

    async def update(self, plan: Update) -> Item:
        params = self._update_params(plan)
        params["ReturnValues"] = "ALL_NEW"
        response = await self._call("UpdateItem", params)
        return deserialize_item(response.get("Attributes", {}))

    async def delete(self, plan: Delete) -> None:
        await self._call("DeleteItem", self._keyed_params(plan))

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
            response = await self._call("BatchWriteItem", {"RequestItems": request})
            request = response.get("UnprocessedItems") or {}
            if not request:
                return
            await self._backoff(attempt, "writes")
            attempt += 1

    async def transact_write(
        self, actions: Sequence[WriteAction], token: str | None = None
    ) -> None:
        """Always sent with a ClientRequestToken (one of our own when none is given), so a
        retry after a lost answer does not apply the transaction twice."""
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
        await self._call(
            "TransactWriteItems",
            {"TransactItems": items, "ClientRequestToken": token or uuid.uuid4().hex},
        )

    async def close(self) -> None:
        if self._owns_transport:
            self.transport.close()
        if self._owns_client and self._client is not None:
            self._client.close()

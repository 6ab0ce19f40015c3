"""Fault injection on the DynamoDB store: unprocessed keys, throttling, transient errors and
an unreachable endpoint give complete results where retries can succeed and the protocol's
errors where they cannot."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from generated.runtime.errors import (
    ConditionFailed,
    StoreUnavailable,
    TransactionCanceled,
    ValidationError,
)
from generated.runtime.plan import BatchGet, Check, Condition, Get, Put
from server.store.dynamodb import DynamoDBStore, make_client
from server.store.local import free_port
from server.store.retry import RetryPolicy
from server.store.testing import TEST_TABLE

FAST = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.004)


def error(code: str, operation: str = "Op", **extra: Any) -> ClientError:
    response: Any = {"Error": {"Code": code, "Message": code}, **extra}
    return ClientError(response, operation)


class FakeClient:
    """Answers each operation from a script: a list of responses or errors, the last one
    repeating; records every request."""

    def __init__(self, **scripts: list[Any]) -> None:
        self.scripts = scripts
        self.calls: dict[str, list[dict[str, Any]]] = {name: [] for name in scripts}

    def __getattr__(self, name: str) -> Callable[..., Any]:
        script = self.scripts[name]

        def call(**params: Any) -> Any:
            self.calls[name].append(params)
            step = script[min(len(self.calls[name]), len(script)) - 1]
            if callable(step):
                step = step(params)
            if isinstance(step, Exception):
                raise step
            return step

        return call


def store_on(client: Any) -> DynamoDBStore:
    return DynamoDBStore(TEST_TABLE, client=client, retry=FAST, max_concurrency=2)


def item(i: int) -> dict[str, Any]:
    return {"PK": {"S": "p"}, "SK": {"S": f"{i:03}"}, "i": {"N": str(i)}}


def half_unprocessed(params: dict[str, Any]) -> dict[str, Any]:
    keys = params["RequestItems"][TEST_TABLE.name]["Keys"]
    done, left = keys[: len(keys) // 2], keys[len(keys) // 2 :]
    return {
        "Responses": {TEST_TABLE.name: [{**k, "i": {"N": k["SK"]["S"]}} for k in done]},
        "UnprocessedKeys": {TEST_TABLE.name: {"Keys": left}},
    }


def everything(params: dict[str, Any]) -> dict[str, Any]:
    keys = params["RequestItems"][TEST_TABLE.name]["Keys"]
    return {"Responses": {TEST_TABLE.name: [{**k, "i": {"N": k["SK"]["S"]}} for k in keys]}}


KEYS = tuple({"PK": "p", "SK": f"{i:03}"} for i in range(100))


async def test_unprocessed_keys_are_retried_until_complete() -> None:
    client = FakeClient(batch_get_item=[half_unprocessed, everything])
    store = store_on(client)
    got = await store.batch_get(BatchGet(KEYS))
    assert sorted(x["i"] for x in got) == list(range(100))
    retried = client.calls["batch_get_item"][1]["RequestItems"][TEST_TABLE.name]["Keys"]
    assert len(retried) == 50
    await store.close()


async def test_keys_left_unprocessed_forever_are_unavailable() -> None:
    client = FakeClient(batch_get_item=[half_unprocessed])
    store = store_on(client)
    with pytest.raises(StoreUnavailable):
        await store.batch_get(BatchGet(KEYS))
    assert len(client.calls["batch_get_item"]) == FAST.max_attempts
    await store.close()


async def test_unprocessed_writes_are_retried() -> None:
    def half(params: dict[str, Any]) -> dict[str, Any]:
        requests = params["RequestItems"][TEST_TABLE.name]
        return {"UnprocessedItems": {TEST_TABLE.name: requests[1:]}} if len(requests) > 1 else {}

    client = FakeClient(batch_write_item=[half])
    store = store_on(client)
    await store.batch_write([Put({"PK": "p", "SK": f"{i}"}) for i in range(3)])
    sizes = [len(c["RequestItems"][TEST_TABLE.name]) for c in client.calls["batch_write_item"]]
    assert sizes == [3, 2, 1]
    await store.close()


@pytest.mark.parametrize(
    "code",
    [
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
    ],
)
async def test_throttling_and_transient_errors_are_retried(code: str) -> None:
    client = FakeClient(get_item=[error(code), error(code), {"Item": item(7)}])
    store = store_on(client)
    assert await store.get(Get({"PK": "p", "SK": "007"})) == {"PK": "p", "SK": "007", "i": 7}
    assert len(client.calls["get_item"]) == 3
    await store.close()


async def test_throttling_that_never_ends_is_unavailable() -> None:
    client = FakeClient(get_item=[error("ThrottlingException")])
    store = store_on(client)
    with pytest.raises(StoreUnavailable):
        await store.get(Get({"PK": "p", "SK": "1"}))
    assert len(client.calls["get_item"]) == FAST.max_attempts
    await store.close()


async def test_errors_that_retrying_cannot_fix_are_mapped_at_once() -> None:
    old = {"PK": {"S": "p"}, "SK": {"S": "1"}, "v": {"N": "2"}}
    reasons = [{"Code": "None"}, {"Code": "ConditionalCheckFailed", "Item": old}]
    client = FakeClient(
        get_item=[error("ValidationException")],
        put_item=[error("ConditionalCheckFailedException", Item=old)],
        transact_write_items=[error("TransactionCanceledException", CancellationReasons=reasons)],
    )
    store = store_on(client)
    with pytest.raises(ValidationError):
        await store.get(Get({"PK": "p", "SK": "1"}))
    with pytest.raises(ConditionFailed) as failed:
        await store.put(Put({"PK": "p", "SK": "1"}, (Condition("not_exists", "PK"),)))
    assert failed.value.item == {"PK": "p", "SK": "1", "v": 2}
    with pytest.raises(TransactionCanceled) as cancelled:
        await store.transact_write(
            [
                Put({"PK": "p", "SK": "2"}),
                Check({"PK": "p", "SK": "1"}, (Condition("exists", "x"),)),
            ]
        )
    assert [r.code for r in cancelled.value.reasons] == ["None", "ConditionalCheckFailed"]
    assert cancelled.value.reasons[1].item == {"PK": "p", "SK": "1", "v": 2}
    assert {name: len(calls) for name, calls in client.calls.items()} == {
        "get_item": 1,
        "put_item": 1,
        "transact_write_items": 1,
    }
    await store.close()


async def test_transaction_conflicts_are_retried() -> None:
    conflict = [{"Code": "None"}, {"Code": "TransactionConflict"}]
    client = FakeClient(
        transact_write_items=[
            error("TransactionCanceledException", CancellationReasons=conflict),
            {},
        ]
    )
    store = store_on(client)
    await store.transact_write([Put({"PK": "p", "SK": "1"}), Put({"PK": "p", "SK": "2"})])
    assert len(client.calls["transact_write_items"]) == 2
    await store.close()


async def test_endpoint_down_is_unavailable() -> None:
    port = free_port()  # nothing listens there any more
    client = make_client(
        f"http://127.0.0.1:{port}", "us-east-1", 2, "x", "x", connect_timeout=0.2, read_timeout=0.2
    )
    store = DynamoDBStore(TEST_TABLE, client=client, retry=FAST)
    with pytest.raises(StoreUnavailable):
        await store.get(Get({"PK": "p", "SK": "1"}))
    with pytest.raises(StoreUnavailable):
        await store.batch_get(BatchGet(KEYS[:3]))
    await store.close()
    client.close()


def test_backoff_is_exponential_with_full_jitter() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=0.01, max_delay=0.1)
    random.seed(3)
    for attempt in range(1, 10):
        ceiling = min(0.1, 0.01 * 2 ** (attempt - 1))
        delays = [policy.delay(attempt) for _ in range(200)]
        assert all(0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8  # the whole range is used, not a fixed step


@pytest.mark.dynamodb_local
async def test_unprocessed_keys_on_every_first_attempt_against_dynamodb_local(
    dynamodb_store: DynamoDBStore,
) -> None:
    real = dynamodb_store.client
    for chunk in range(4):
        await dynamodb_store.batch_write(
            [Put({"PK": "p", "SK": f"{i:03}", "i": i}) for i in range(chunk * 25, chunk * 25 + 25)]
        )

    class FirstAttemptHalf:
        """The real client, but every request's first attempt leaves half its keys."""

        def __init__(self) -> None:
            self.calls = 0

        def batch_get_item(self, **params: Any) -> dict[str, Any]:
            self.calls += 1
            table, request = next(iter(params["RequestItems"].items()))
            keys = request["Keys"]
            if self.calls % 2 == 1:
                answer: dict[str, Any] = real.batch_get_item(
                    RequestItems={table: {"Keys": keys[: len(keys) // 2]}}
                )
                answer["UnprocessedKeys"] = {table: {"Keys": keys[len(keys) // 2 :]}}
                return answer
            result: dict[str, Any] = real.batch_get_item(**params)
            return result

    wrapper = FirstAttemptHalf()
    store = DynamoDBStore(dynamodb_store.table, client=wrapper, retry=FAST)
    got = await store.batch_get(BatchGet(KEYS))
    assert sorted(x["i"] for x in got) == list(range(100))
    assert wrapper.calls == 2
    await store.close()

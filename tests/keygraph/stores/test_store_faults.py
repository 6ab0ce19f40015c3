"""Fault injection on the DynamoDB store, through its transport's connections: unprocessed
keys, throttling, transient 5xx, damaged answers (CRC mismatch), dropped connections and an
unreachable endpoint give complete results where retries can succeed and the protocol's errors
where they cannot."""

from __future__ import annotations

import asyncio
import json
import random
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from botocore.credentials import Credentials

from keygraph import deadline
from keygraph.errors import (
    ConditionFailed,
    StoreThrottled,
    StoreUnavailable,
    TransactionCanceled,
    ValidationError,
)
from keygraph.plan import BatchGet, Check, Condition, Delete, Get, Put, Query, Update
from keygraph.stores.dynamodb import connections
from keygraph.stores.dynamodb.local import LOCAL_REGION, free_port
from keygraph.stores.dynamodb.retry import RetryBudget, RetryPolicy
from keygraph.stores.dynamodb.store import DynamoDBStore
from keygraph.stores.dynamodb.transport import TARGET_PREFIX, Transport
from testkit.stores import TEST_TABLE

FAST = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.004)
CREDENTIALS = Credentials("key", "secret")


@dataclass
class Reply:
    """An HTTP answer; `crc` None sends the body's true CRC32."""

    body: Any
    status: int = 200
    crc: int | None = None
    raw: bytes | None = None

    def response(self) -> connections.Reply:
        data = self.raw if self.raw is not None else json.dumps(self.body).encode()
        crc = zlib.crc32(data) if self.crc is None else self.crc
        headers = {"x-amz-crc32": str(crc), "content-type": "application/x-amz-json-1.0"}
        return connections.Reply(self.status, headers, data)


def error(code: str, status: int = 400, **extra: Any) -> Reply:
    return Reply(
        {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": code, **extra}, status
    )


Step = dict[str, Any] | Reply | Exception | Callable[[dict[str, Any]], Any]


@dataclass
class FakePool:
    """Stands in for the transport's connections: answers each operation from a script
    (responses, error replies or exceptions, the last one repeating) and records every
    decoded request."""

    scripts: dict[str, list[Step]]
    calls: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    fresh: list[bool] = field(default_factory=list)

    async def post(self, head: bytes, body: bytes, *, fresh: bool = False) -> connections.Reply:
        target = next(line for line in head.decode().split("\r\n") if "X-Amz-Target" in line)
        operation = target.partition(":")[2].strip().removeprefix(TARGET_PREFIX)
        params = json.loads(body)
        calls = self.calls.setdefault(operation, [])
        calls.append(params)
        self.fresh.append(fresh)
        script = self.scripts[operation]
        step = script[min(len(calls), len(script)) - 1]
        if callable(step):
            step = step(params)
        if isinstance(step, connections.ExchangeFailed):
            raise step
        if isinstance(step, Exception):  # on a new connection, after the request was sent
            raise connections.ExchangeFailed(step, sent=True, answered=False, reused=False)
        return (step if isinstance(step, Reply) else Reply(step)).response()

    def close(self) -> None:
        pass


def store_on(pool: FakePool) -> DynamoDBStore:
    transport = Transport("http://dynamodb.test", "us-east-1", CREDENTIALS, pool=pool)
    return DynamoDBStore(TEST_TABLE, transport=transport, retry=FAST, max_concurrency=2)


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
    pool = FakePool({"BatchGetItem": [half_unprocessed, everything]})
    store = store_on(pool)
    got = await store.batch_get(BatchGet(KEYS))
    assert sorted(x["i"] for x in got) == list(range(100))
    retried = pool.calls["BatchGetItem"][1]["RequestItems"][TEST_TABLE.name]["Keys"]
    assert len(retried) == 50
    await store.close()


async def test_keys_left_unprocessed_forever_are_unavailable() -> None:
    pool = FakePool({"BatchGetItem": [half_unprocessed]})
    store = store_on(pool)
    with pytest.raises(StoreUnavailable):
        await store.batch_get(BatchGet(KEYS))
    assert len(pool.calls["BatchGetItem"]) == FAST.max_attempts
    await store.close()


async def test_unprocessed_writes_are_retried() -> None:
    def half(params: dict[str, Any]) -> dict[str, Any]:
        requests = params["RequestItems"][TEST_TABLE.name]
        return {"UnprocessedItems": {TEST_TABLE.name: requests[1:]}} if len(requests) > 1 else {}

    pool = FakePool({"BatchWriteItem": [half]})
    store = store_on(pool)
    await store.batch_write([Put({"PK": "p", "SK": f"{i}"}) for i in range(3)])
    sizes = [len(c["RequestItems"][TEST_TABLE.name]) for c in pool.calls["BatchWriteItem"]]
    assert sizes == [3, 2, 1]
    await store.close()


@pytest.mark.parametrize(
    "fault",
    [
        error("ProvisionedThroughputExceededException"),
        error("ThrottlingException"),
        error("RequestLimitExceeded"),
        error("InternalServerError", 500),
        error("ServiceUnavailable", 503),
        Reply(None, 502, raw=b"<html>Bad Gateway</html>"),  # a proxy's page, not DynamoDB's
        Reply({"Item": item(7)}, crc=12345),  # damaged on the way
        Reply(None, raw=b'{"Item": {"PK"'),  # cut short, no checksum to tell
        ConnectionResetError("Connection reset by peer"),
        ConnectionRefusedError("Connection refused"),
        asyncio.IncompleteReadError(b"{", 10),  # the connection closed mid-answer
        TimeoutError(),
        connections.ProtocolError("an answer without a length"),
    ],
    ids=lambda fault: getattr(fault, "status", None) or type(fault).__name__,
)
async def test_throttling_and_transient_errors_are_retried(fault: Step) -> None:
    pool = FakePool({"GetItem": [fault, fault, {"Item": item(7)}]})
    store = store_on(pool)
    assert await store.get(Get({"PK": "p", "SK": "007"})) == {"PK": "p", "SK": "007", "i": 7}
    assert len(pool.calls["GetItem"]) == 3
    await store.close()


async def test_a_checksum_that_never_matches_is_unavailable() -> None:
    pool = FakePool({"GetItem": [Reply({"Item": item(7)}, crc=1)]})
    store = store_on(pool)
    with pytest.raises(StoreUnavailable, match="CRC32"):
        await store.get(Get({"PK": "p", "SK": "007"}))
    assert len(pool.calls["GetItem"]) == FAST.max_attempts
    await store.close()


async def test_throttling_that_never_ends_is_unavailable() -> None:
    pool = FakePool({"GetItem": [error("ThrottlingException")]})
    store = store_on(pool)
    with pytest.raises(StoreUnavailable):
        await store.get(Get({"PK": "p", "SK": "1"}))
    assert len(pool.calls["GetItem"]) == FAST.max_attempts
    await store.close()


async def test_errors_that_retrying_cannot_fix_are_mapped_at_once() -> None:
    old = {"PK": {"S": "p"}, "SK": {"S": "1"}, "v": {"N": "2"}}
    reasons = [{"Code": "None"}, {"Code": "ConditionalCheckFailed", "Item": old}]
    pool = FakePool(
        {
            "GetItem": [error("ValidationException")],
            "PutItem": [error("ConditionalCheckFailedException", Item=old)],
            "TransactWriteItems": [
                error("TransactionCanceledException", CancellationReasons=reasons)
            ],
            "DeleteItem": [error("ResourceNotFoundException")],
        }
    )
    store = store_on(pool)
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
    with pytest.raises(StoreUnavailable, match="ResourceNotFoundException"):
        await store.delete(Delete({"PK": "p", "SK": "1"}))
    assert {name: len(calls) for name, calls in pool.calls.items()} == {
        "GetItem": 1,
        "PutItem": 1,
        "TransactWriteItems": 1,
        "DeleteItem": 1,
    }
    await store.close()


async def test_transaction_conflicts_are_retried() -> None:
    conflict = [{"Code": "None"}, {"Code": "TransactionConflict"}]
    pool = FakePool(
        {
            "TransactWriteItems": [
                error("TransactionCanceledException", CancellationReasons=conflict),
                {},
            ]
        }
    )
    store = store_on(pool)
    await store.transact_write([Put({"PK": "p", "SK": "1"}), Put({"PK": "p", "SK": "2"})])
    assert len(pool.calls["TransactWriteItems"]) == 2
    await store.close()


async def test_endpoint_down_is_unavailable() -> None:
    port = free_port()  # nothing listens there any more
    transport = Transport(
        f"http://127.0.0.1:{port}",
        "us-east-1",
        CREDENTIALS,
        max_connections=2,
        connect_timeout=0.2,
        read_timeout=0.2,
    )
    store = DynamoDBStore(TEST_TABLE, transport=transport, retry=FAST)
    with pytest.raises(StoreUnavailable, match="after 4 attempts"):
        await store.get(Get({"PK": "p", "SK": "1"}))
    with pytest.raises(StoreUnavailable):
        await store.batch_get(BatchGet(KEYS[:3]))
    await store.close()
    transport.close()


STALE = connections.ExchangeFailed(
    asyncio.IncompleteReadError(b"", None), sent=True, answered=False, reused=True
)
"""A reused connection that died before any byte of the answer: its peer closed it idle."""
CUT = connections.ExchangeFailed(
    asyncio.IncompleteReadError(b"HTTP/1.1 2", None), sent=True, answered=True, reused=False
)
"""An answer cut short: DynamoDB has run the call."""
NOWHERE = connections.ExchangeFailed(
    ConnectionRefusedError("Connection refused"), sent=False, answered=False, reused=False
)
"""No connection could be opened: the call went nowhere."""
CREATE = Put({"PK": "p", "SK": "1"}, (Condition("not_exists", "PK"),))


async def test_a_stale_connection_is_replaced_at_once_for_calls_safe_to_repeat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []

    async def sleep(delay: float) -> None:
        slept.append(delay)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    pool = FakePool(
        {
            "GetItem": [STALE, STALE, {"Item": item(7)}],
            "TransactWriteItems": [STALE, {}],
            "PutItem": [STALE, {}],
        }
    )
    store = store_on(pool)
    assert await store.get(Get({"PK": "p", "SK": "007"})) is not None
    # once at once on a new connection; a second stale one waits its backoff
    assert (pool.fresh, len(slept)) == ([False, True, False], 1)
    await store.transact_write([Put({"PK": "p", "SK": "1"})])
    tokens = {c["ClientRequestToken"] for c in pool.calls["TransactWriteItems"]}
    assert len(tokens) == 1  # the same transaction, applied once
    await store.put(Put({"PK": "p", "SK": "1"}))  # unconditional: the same item again
    assert pool.fresh[3:] == [False, True, False, True]
    assert len(slept) == 1
    await store.close()


@pytest.mark.parametrize("fault", [STALE, CUT, TimeoutError(), error("InternalServerError", 500)])
async def test_a_write_that_may_have_run_is_not_repeated_unless_safe(fault: Step) -> None:
    pool = FakePool(
        {
            "PutItem": [fault, {}],
            "UpdateItem": [fault, fault, {"Attributes": item(1)}],
            "DeleteItem": [fault, fault, {}],
            "BatchWriteItem": [fault, {}],
            "TransactWriteItems": [fault, {}],
        }
    )
    store = store_on(pool)
    with pytest.raises(StoreUnavailable):
        await store.put(CREATE)
    with pytest.raises(StoreUnavailable):
        await store.update(Update({"PK": "p", "SK": "1"}, add={"n": 1}))
    with pytest.raises(StoreUnavailable):
        await store.delete(Delete({"PK": "p", "SK": "1"}, (Condition("exists", "PK"),)))
    assert {name: len(calls) for name, calls in pool.calls.items()} == {
        "PutItem": 1,
        "UpdateItem": 1,
        "DeleteItem": 1,
    }
    await store.update(Update({"PK": "p", "SK": "1"}, set={"a": 1}, remove=("b",)))
    await store.delete(Delete({"PK": "p", "SK": "1"}))
    await store.batch_write([Put({"PK": "p", "SK": "1"})])
    await store.transact_write([Update({"PK": "p", "SK": "1"}, add={"n": 1})])
    assert {name: len(calls) for name, calls in pool.calls.items()} == {
        "PutItem": 1,
        "UpdateItem": 3,
        "DeleteItem": 3,
        "BatchWriteItem": 2,
        "TransactWriteItems": 2,
    }
    await store.close()


@pytest.mark.parametrize("fault", [NOWHERE, error("ThrottlingException")])
async def test_a_write_that_did_not_run_is_retried(fault: Step) -> None:
    pool = FakePool({"PutItem": [fault, {}]})
    store = store_on(pool)
    await store.put(CREATE)
    assert len(pool.calls["PutItem"]) == 2
    await store.close()


async def test_a_transaction_still_running_is_awaited_under_its_token() -> None:
    pool = FakePool({"TransactWriteItems": [CUT, error("TransactionInProgressException"), {}]})
    store = store_on(pool)
    await store.transact_write([Put({"PK": "p", "SK": "1"})], token="t-1")
    assert [c["ClientRequestToken"] for c in pool.calls["TransactWriteItems"]] == ["t-1"] * 3
    await store.close()


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
    for chunk in range(4):
        await dynamodb_store.batch_write(
            [Put({"PK": "p", "SK": f"{i:03}", "i": i}) for i in range(chunk * 25, chunk * 25 + 25)]
        )
    real = dynamodb_store.transport

    class FirstAttemptHalf(Transport):
        """The real transport, but every request's first attempt leaves half its keys."""

        calls = 0

        async def call(
            self, operation: str, params: dict[str, Any], *, fresh: bool = False
        ) -> dict[str, Any]:
            assert operation == "BatchGetItem"
            self.calls += 1
            table, request = next(iter(params["RequestItems"].items()))
            keys = request["Keys"]
            if self.calls % 2 == 1:
                half = {"RequestItems": {table: {"Keys": keys[: len(keys) // 2]}}}
                answer = await super().call(operation, half, fresh=fresh)
                answer["UnprocessedKeys"] = {table: {"Keys": keys[len(keys) // 2 :]}}
                return answer
            return await super().call(operation, params, fresh=fresh)

    wrapper = FirstAttemptHalf(real.endpoint_url, LOCAL_REGION, real.credentials)
    store = DynamoDBStore(dynamodb_store.table, transport=wrapper, retry=FAST)
    got = await store.batch_get(BatchGet(KEYS))
    assert sorted(x["i"] for x in got) == list(range(100))
    assert wrapper.calls == 2
    await store.close()
    wrapper.close()


async def test_throttling_past_the_retries_is_throttled_not_unavailable() -> None:
    throttled = [{"Code": "None"}, {"Code": "ThrottlingError"}]
    pool = FakePool(
        {
            "GetItem": [error("ProvisionedThroughputExceededException")],
            "TransactWriteItems": [
                error("TransactionCanceledException", CancellationReasons=throttled)
            ],
            "BatchGetItem": [half_unprocessed],
        }
    )
    store = store_on(pool)
    with pytest.raises(StoreThrottled):
        await store.get(Get({"PK": "p", "SK": "1"}))
    with pytest.raises(StoreThrottled):
        await store.transact_write([Put({"PK": "p", "SK": "1"}), Put({"PK": "p", "SK": "2"})])
    with pytest.raises(StoreThrottled):
        await store.batch_get(BatchGet(KEYS))
    await store.close()


async def test_transaction_conflicts_past_the_retries_are_the_cancellation() -> None:
    conflict = [{"Code": "TransactionConflict"}, {"Code": "None"}]
    pool = FakePool(
        {
            "TransactWriteItems": [
                error("TransactionCanceledException", CancellationReasons=conflict)
            ]
        }
    )
    store = store_on(pool)
    with pytest.raises(TransactionCanceled) as cancelled:
        await store.transact_write([Put({"PK": "p", "SK": "1"}), Put({"PK": "p", "SK": "2"})])
    assert [r.code for r in cancelled.value.reasons] == ["TransactionConflict", "None"]
    assert len(pool.calls["TransactWriteItems"]) == FAST.max_attempts
    await store.close()


async def test_the_retry_budget_stops_retries_and_successes_refill_it() -> None:
    budget = RetryBudget(capacity=12, retry_cost=5, timeout_cost=10, success_refill=1)
    pool = FakePool({"GetItem": [error("ThrottlingException")], "Query": [{"Items": []}]})
    transport = Transport("http://dynamodb.test", "us-east-1", CREDENTIALS, pool=pool)
    store = DynamoDBStore(TEST_TABLE, transport=transport, retry=FAST, budget=budget)
    with pytest.raises(StoreThrottled, match="budget"):
        await store.get(Get({"PK": "p", "SK": "1"}))
    assert (len(pool.calls["GetItem"]), budget.tokens) == (3, 2)  # two retries paid, 5 each
    for _ in range(3):
        await store.query(Query(partition="p"))
    assert budget.tokens == 5
    pool.scripts["GetItem"] = [error("ThrottlingException"), {"Item": item(1)}]
    pool.calls.clear()
    assert await store.get(Get({"PK": "p", "SK": "001"})) is not None
    assert budget.tokens == 5  # the retry's 5 taken, and returned by its success
    await store.close()


async def test_no_backoff_is_waited_past_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay: float) -> None:
        slept.append(delay)
        await real_sleep(delay)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    monkeypatch.setattr(random, "uniform", lambda low, high: high)
    slow = RetryPolicy(max_attempts=8, base_delay=0.05, max_delay=5.0)
    pool = FakePool({"GetItem": [error("ThrottlingException")], "Query": [TimeoutError()]})
    transport = Transport("http://dynamodb.test", "us-east-1", CREDENTIALS, pool=pool)
    store = DynamoDBStore(TEST_TABLE, transport=transport, retry=slow)
    token = deadline.set_at(time.monotonic() + 0.5)
    try:
        with pytest.raises(StoreThrottled, match="deadline"):
            await store.get(Get({"PK": "p", "SK": "1"}))
        assert slept == [0.05, 0.1, 0.2]  # 0.4 more would end past the deadline
        with pytest.raises(StoreUnavailable, match="deadline"):
            await store.query(Query(partition="p"))
    finally:
        deadline.reset(token)
    await store.close()


@pytest.mark.parametrize(
    ("steps", "applied"),
    [
        ([error("ThrottlingException")], False),  # every attempt refused: nothing ran
        ([NOWHERE], False),  # never sent
        ([CUT], None),  # sent, its answer lost: not sent again
        ([error("InternalServerError", 500)], None),
        ([STALE, STALE, error("ThrottlingException")], None),  # an attempt may have run
    ],
    ids=["throttled", "nowhere", "cut", "500", "stale-then-throttled"],
)
async def test_a_failed_write_says_whether_it_may_have_been_applied(
    steps: list[Step], applied: bool | None
) -> None:
    pool = FakePool({"PutItem": steps, "GetItem": steps})
    store = store_on(pool)
    write = CREATE if applied is None and len(steps) == 1 else Put({"PK": "p", "SK": "1"})
    with pytest.raises(StoreUnavailable) as failed:
        await store.put(write)
    assert failed.value.applied is applied
    with pytest.raises(StoreUnavailable) as read:
        await store.get(Get({"PK": "p", "SK": "1"}))
    assert read.value.applied is False  # a read applies nothing
    await store.close()

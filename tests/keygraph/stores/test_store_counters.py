"""The DynamoDB store counts what DynamoDB pushed back: each throttled attempt, and each
attempt made again with why (keygraph/stores/dynamodb/counters.py)."""

from __future__ import annotations

from prometheus_client import REGISTRY

from keygraph.plan import BatchGet, Get
from tests.keygraph.stores.test_store_faults import (
    KEYS,
    FakePool,
    error,
    everything,
    half_unprocessed,
    item,
    store_on,
)


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_throttles_and_retries_are_counted() -> None:
    throttles = sample("keygraph_dynamodb_throttles_total", operation="GetItem")
    retried = sample(
        "keygraph_dynamodb_retries_total", operation="GetItem", reason="ThrottlingException"
    )
    reset = sample("keygraph_dynamodb_retries_total", operation="GetItem", reason="connection")
    pool = FakePool(
        {
            "GetItem": [
                error("ThrottlingException"),
                error("ThrottlingException"),
                ConnectionResetError("reset"),
                {"Item": item(1)},
            ]
        }
    )
    store = store_on(pool)
    assert await store.get(Get({"PK": "p", "SK": "001"})) is not None
    await store.close()
    assert sample("keygraph_dynamodb_throttles_total", operation="GetItem") == throttles + 2
    assert (
        sample("keygraph_dynamodb_retries_total", operation="GetItem", reason="ThrottlingException")
        == retried + 2
    )
    assert (
        sample("keygraph_dynamodb_retries_total", operation="GetItem", reason="connection")
        == reset + 1
    )


async def test_unprocessed_keys_count_as_retries() -> None:
    labels = {"operation": "BatchGetItem", "reason": "unprocessed"}
    before = sample("keygraph_dynamodb_retries_total", **labels)
    store = store_on(FakePool({"BatchGetItem": [half_unprocessed, everything]}))
    assert len(await store.batch_get(BatchGet(KEYS))) == len(KEYS)
    await store.close()
    assert sample("keygraph_dynamodb_retries_total", **labels) == before + 1

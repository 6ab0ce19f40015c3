"""The change-stream benchmark, run small on DynamoDB Local: it times polls and batches on
both clients, and every write reaches the poller on one shard iterator."""

from __future__ import annotations

import pytest

from bench import dynamodb_stream_bench
from keygraph.stores.dynamodb.local import DynamoDBLocal


@pytest.mark.dynamodb_local
async def test_a_small_run(dynamodb_local: DynamoDBLocal) -> None:
    result = await dynamodb_stream_bench.measure(dynamodb_local, quick=True)
    cost = result["poll_cost"]
    assert cost["empty_polls"] == 20
    assert cost["batches"] == 2
    assert cost["empty_cpu_ms"] > 0
    assert cost["batch100_cpu_ms"] > 0
    for run in result["latency"]:
        assert run["writes"] == 10
        assert 0 < run["p50_ms"] <= run["p99_ms"] < run["interval_ms"] + 1000
        assert run["iterator_requests"] == 0  # the poll goes on with the iterator it has

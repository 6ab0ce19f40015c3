"""The subscription latency benchmark, run small: every write reaches every subscriber."""

from __future__ import annotations

from typing import Any

import pytest

from bench import realtime_bench


async def test_a_small_run() -> None:
    result = await realtime_bench.measure(subscribers=2, writes=3, poll=0.01)
    assert result["writes"] == 3
    assert 0 < result["first_p50_ms"] <= result["last_p99_ms"]


async def test_a_small_burst_counts_every_event() -> None:
    result = await realtime_bench.throughput(subscribers=3, writes=4)
    assert result["events"] == 12
    assert result["events_per_s"] > 0
    assert result["cpu_ms_per_event"] > 0


@pytest.mark.dynamodb_local
async def test_a_small_run_on_dynamodb_local(dynamodb_client: Any) -> None:
    result = await realtime_bench.measure(
        subscribers=2, writes=2, poll=0.05, dynamodb=dynamodb_client
    )
    assert result["store"] == "dynamodb-local"
    assert 0 < result["first_p50_ms"] <= result["last_p99_ms"]

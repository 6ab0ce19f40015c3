"""The subscription latency benchmark, run small: every write reaches every subscriber, on
a served worker (alone, or taking turns with another checkout's) and in process."""

from __future__ import annotations

import resource
from typing import Any

import pytest

from bench import realtime_bench, realtime_rounds, realtime_served
from keygraph.stores.dynamodb.local import DynamoDBLocal


def test_a_small_served_run() -> None:
    result = realtime_rounds.served_runs("embedded", [1, 3], writes=3, rounds=1)
    assert [row["subscribers"] for row in result["medians"]] == [1, 3]
    for row in result["medians"]:
        assert row["writes"] == 3
        assert 0 < row["first_p50_ms"] <= row["last_p99_ms"]
        assert row["events_per_s"] > 0
        assert row["burst_server_cpu_us_per_event"] > 0
    assert result["load_average_1min"][0]["round"] == 1


def test_a_small_run_taking_turns_with_another_checkout() -> None:
    result = realtime_rounds.paired_runs("HEAD", 2, writes=3, rounds=1)
    for arm in ("base", "this"):
        (run,) = result["runs"][arm]
        assert (run["round"], run["subscribers"], run["writes"]) == (1, 2, 3)
        assert 0 < run["first_p50_ms"] <= run["last_p99_ms"]
    assert result["ratio_this_to_base"]["last_p50_ms"]["median"] > 0
    assert result["base"] == "HEAD"


def test_the_fd_limit_is_raised_for_many_subscribers() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        realtime_served.raise_fd_limit(1000)
        raised = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        assert raised >= min(2256, hard)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.dynamodb_local
async def test_a_small_served_run_on_dynamodb_local(dynamodb_local: DynamoDBLocal) -> None:
    with realtime_served.serving("dynamodb-local", 0.05, dynamodb_local) as served:
        try:
            result = await realtime_served.measure(served, subscribers=2, writes=2, poll=0.05)
        finally:
            await served.store.close()
    assert result["store"] == "dynamodb-local"
    assert 0 < result["first_p50_ms"] <= result["last_p99_ms"]


async def test_a_small_run_in_process() -> None:
    result = await realtime_bench.measure(subscribers=2, writes=3, poll=0.01)
    assert result["writes"] == 3
    assert 0 < result["first_p50_ms"] <= result["last_p99_ms"]


async def test_a_small_burst_in_process_counts_every_event() -> None:
    result = await realtime_bench.throughput(subscribers=3, writes=4)
    assert result["events"] == 12
    assert result["events_per_s"] > 0
    assert result["cpu_ms_per_event"] > 0


@pytest.mark.dynamodb_local
async def test_a_small_run_in_process_on_dynamodb_local(dynamodb_client: Any) -> None:
    result = await realtime_bench.measure(
        subscribers=2, writes=2, poll=0.05, dynamodb=dynamodb_client
    )
    assert result["store"] == "dynamodb-local"
    assert 0 < result["first_p50_ms"] <= result["last_p99_ms"]

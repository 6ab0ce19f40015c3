import asyncio
from typing import Any

import pytest

from bench.asgi import AsgiClient
from bench.inprocess import timed_runs
from bench.measure import Runs, aggregate, same_data
from bench.queries import Operation
from bench.stats import RunSummary


def _run(rps: float) -> RunSummary:
    return RunSummary(requests=10, errors=0, seconds=1.0, rps=rps, p50_ms=1000 / rps, p99_ms=2)


def _op(name: str) -> Operation:
    return Operation(name, name, "{ x }", {}, 1)


def test_aggregate_takes_ratios_within_each_repeat() -> None:
    ops = [_op("Q2"), _op("Q1")]
    runs: Runs = {
        # The machine slows down tenfold in the second repeat: each repeat's ratio is 0.8.
        ("Q2", "keygraph"): [_run(80), _run(8), _run(40)],
        ("Q2", "graphql-core"): [_run(40), _run(2), _run(20)],
        ("Q2", "floor"): [_run(100), _run(10), _run(50)],
        ("Q1", "keygraph"): [_run(50)],
        ("Q1", "graphql-core"): [_run(25)],
        ("Q1", "floor"): [_run(100)],
    }
    blocks = aggregate(ops, runs)
    assert blocks["Q2"]["vs_floor"] == pytest.approx(0.8)
    assert blocks["Q2"]["vs_graphql_core"] == pytest.approx(2.0)
    assert blocks["Q2"]["graphql_core_vs_floor"] == pytest.approx(0.4)
    assert blocks["Q2"]["keygraph"]["rps"] == 40
    assert blocks["Q2"]["keygraph"]["runs"] == 3
    assert blocks["Q1"]["vs_floor"] == pytest.approx(0.5)
    assert blocks["Q1"]["vs_graphql_core"] == pytest.approx(2.0)


def _cpu_run(cpu_ms: float) -> RunSummary:
    return RunSummary(10, 0, 1.0, 10.0, 100.0, 200.0, cpu_ms=cpu_ms)


def test_aggregate_compares_the_servers_cpu_per_request_within_each_repeat() -> None:
    runs: Runs = {
        ("Q1", "keygraph"): [_cpu_run(1.0), _cpu_run(4.0), _cpu_run(2.0)],
        ("Q1", "graphql-core"): [_cpu_run(3.0), _cpu_run(12.0), _cpu_run(20.0)],
        ("Q1", "floor"): [_cpu_run(0.5), _cpu_run(2.0), _cpu_run(1.0)],
    }
    block = aggregate([_op("Q1")], runs)["Q1"]
    assert block["cpu_vs_graphql_core"] == pytest.approx(3.0)
    assert block["cpu_vs_floor"] == pytest.approx(0.5)
    assert block["keygraph"]["cpu_ms"] == pytest.approx(2.0)
    unread = aggregate([_op("Q1")], {key: [_run(10)] for key in runs})["Q1"]
    assert "cpu_vs_graphql_core" not in unread
    assert unread["keygraph"]["cpu_ms"] is None


def test_same_data_tolerates_last_bit_float_differences_only() -> None:
    assert same_data({"a": [1, 0.1 + 0.2]}, {"a": [1, 0.3]})
    assert not same_data({"a": 0.3}, {"a": 0.31})
    assert not same_data({"a": [1, 2]}, {"a": [1]})
    assert not same_data({"a": 1}, {"b": 1})
    assert not same_data({"a": "1"}, {"a": 1.0})
    assert same_data({"x": None, "y": "s"}, {"x": None, "y": "s"})


def _app_taking(seconds: float, body: bytes = b'{"data": {}}') -> Any:
    """An ASGI app answering every request after `seconds` with `body`."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await asyncio.sleep(seconds)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})

    return app


async def test_timed_runs_interleave_clients_and_keep_to_the_request_bounds() -> None:
    op = _op("Q1")
    failing = b'{"data": null, "errors": [{"message": "no"}]}'
    clients = {"fast": AsgiClient(_app_taking(0.01), {}), "slow": AsgiClient(_app_taking(0.04), {})}
    broken = AsgiClient(_app_taking(0.0, failing), {})
    short = await timed_runs(clients, op, duration_s=0.001, max_requests=100)
    least = await timed_runs(clients, op, duration_s=0.001, max_requests=100, min_requests=4)
    capped = await timed_runs(clients, op, duration_s=10.0, max_requests=2, min_requests=4)
    errors = await timed_runs({"broken": broken}, op, duration_s=10.0, max_requests=2)
    assert [run.requests for run in short.values()] == [1, 1]
    assert [run.requests for run in least.values()] == [4, 4]
    assert [run.requests for run in capped.values()] == [2, 2]
    # Each client's rate is its own: requests over the time its own requests took.
    assert least["fast"].rps > 2 * least["slow"].rps
    assert least["slow"].rps <= 1 / 0.04
    assert least["fast"].errors == 0
    assert errors["broken"].errors == 2

"""The subscription latency benchmark, run small: every write reaches every subscriber."""

from __future__ import annotations

from bench import realtime_bench


async def test_a_small_run() -> None:
    result = await realtime_bench.measure(subscribers=2, writes=3, poll=0.01)
    assert result["writes"] == 3
    assert 0 < result["first_p50_ms"] <= result["last_p99_ms"]

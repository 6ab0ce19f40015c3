"""The stream benchmark, run small: every write it makes with the stream on is read back."""

from __future__ import annotations

from pathlib import Path

from bench import stream_bench


async def test_a_small_run(tmp_path: Path) -> None:
    result = await stream_bench.measure(tmp_path, writes=20, rounds=2)
    assert result["read"]["records"] == 2 * 3 * 20
    assert result["poll_us"]["idle"] > 0
    for operation in stream_bench.OPERATIONS:
        assert result[operation]["on_us"] > 0
        assert result[operation]["ratio"] > 0

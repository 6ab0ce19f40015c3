"""The soak harness, run for a few seconds: it serves, loads, samples and reads back."""

from __future__ import annotations

from pathlib import Path

from bench import soak


def test_a_short_soak_reads_back_every_acknowledged_write(tmp_path: Path) -> None:
    result = soak.run("embedded", minutes=0.05, concurrency=2, data=tmp_path)
    assert result["errors"] == 0
    assert result["answers"] > 0
    assert result["acknowledged_writes"] > 0
    assert result["lost_writes"] == []
    row = result["per_minute"][0]
    assert row["answers"] == result["answers"]
    assert row["memory_kib"]["RssAnon"] < row["memory_kib"]["VmRSS"]
    assert 0 < row["memory_kib"]["HeapAnon"] < row["memory_kib"]["RssAnon"]
    assert row["p50_ms"] <= row["p99_ms"]

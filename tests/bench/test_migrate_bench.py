"""The migration benchmark, run small: it loads, plans, migrates and times a put loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench import migrate_bench


def test_a_small_run_migrates_every_book(tmp_path: Path) -> None:
    v1, v2 = migrate_bench.packages(tmp_path / "packages")
    result = asyncio.run(migrate_bench.measure("embedded", v1, v2, 300, tmp_path))
    assert result["plan_to_update"] == 300
    assert result["backfill_items_per_second"] > 0
    assert result["put_loop_items_per_second"] > 0

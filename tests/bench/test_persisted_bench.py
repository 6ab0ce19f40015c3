"""The persisted-operations benchmark, run small: every arm answers on both executors."""

from __future__ import annotations

import pytest

from bench import persisted_bench
from server.seed.tenant import SeedSizes


async def test_a_small_run(monkeypatch: pytest.MonkeyPatch) -> None:
    small = SeedSizes(users=3, orders=6, groups=1, org_nodes=1, org_depth=1, shops=1)
    monkeypatch.setattr(persisted_bench, "SIZES", small)
    report = await persisted_bench.run(rounds=4)
    assert set(report["results"]) == {
        "Q1 POST, compiled",
        "Q1 GET, compiled",
        "Q1 POST, strawberry",
        "Q1 GET, strawberry",
    }
    for result in report["results"].values():
        assert result["apq_hit_p50_us"] > 0
        assert result["text_p50_us"] > 0

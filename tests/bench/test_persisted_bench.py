"""The persisted-operations benchmark, run small: every arm answers on both executors."""

from __future__ import annotations

import pytest

from bench import persisted_bench
from server.seed.tenant import SeedSizes


async def test_a_small_run(monkeypatch: pytest.MonkeyPatch) -> None:
    small = SeedSizes(users=3, orders=6, groups=1, org_nodes=1, org_depth=1, shops=1)
    monkeypatch.setattr(persisted_bench, "SIZES", small)
    report = await persisted_bench.run(rounds=4)
    results = report["results"]
    assert set(results) == {
        f"{document} {arm}, {executor}"
        for document in ("Q1", "SCREEN")
        for arm in ("POST", "GET", "POST by text")
        for executor in ("compiled", "graphql-core")
    }
    for result in results.values():
        assert result["apq_hit_p50_us"] > 0
        assert result["text_p50_us"] > 0
    for name, result in results.items():
        if "by text" in name:
            assert result["new_text_by_shape_p50_us"] > 0
            assert result["apq_hit/new_text_as_written_p50"] > 0

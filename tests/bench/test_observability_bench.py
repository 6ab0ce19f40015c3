"""The observability benchmark, run small: every arm answers Q1 and Q3 on both executors."""

from __future__ import annotations

import pytest

from bench import observability_bench
from server.seed.tenant import SeedSizes


async def test_a_small_run(monkeypatch: pytest.MonkeyPatch) -> None:
    small = SeedSizes(users=3, orders=6, groups=1, org_nodes=1, org_depth=1, shops=1)
    monkeypatch.setattr(observability_bench, "SIZES", small)
    report = await observability_bench.run(rounds=4)
    assert set(report["results"]) == {
        "Q1, compiled",
        "Q3, compiled",
        "Q1, graphql-core",
        "Q3, graphql-core",
    }
    for result in report["results"].values():
        for arm in observability_bench.ARMS:
            assert result[f"{arm}_p50_us"] > 0
        assert result["tracing_over_off"] > 0

"""The literals benchmark, run small: every arm answers on both executors."""

from __future__ import annotations

import pytest

from bench import literals_bench
from server.seed.tenant import SeedSizes


async def test_a_small_run(monkeypatch: pytest.MonkeyPatch) -> None:
    small = SeedSizes(users=6, orders=2, groups=1, org_nodes=1, org_depth=1, shops=1)
    monkeypatch.setattr(literals_bench, "SIZES", small)
    monkeypatch.setattr(literals_bench, "DISTINCT", 3)
    report = await literals_bench.run(rounds=4)
    assert set(report["results"]) == {"user(id), compiled", "user(id), graphql-core"}
    for result in report["results"].values():
        for arm in ("variables", "literals", "apq_hit", "new_literal_text"):
            assert result[f"{arm}_p50_us"] > 0
        assert result["literals/variables_p50"] > 0

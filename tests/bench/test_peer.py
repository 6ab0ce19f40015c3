"""The peer (bench/peer): it answers Q1-Q3 as keygraph does, and a short side-by-side run
reports both servers' CPU per request."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.dataset import RNG_SEED, TENANTS
from bench.floor_data import load_floor_data
from bench.peer.versus import Load, compare, table
from bench.queries import operations
from bench.targets import auth_headers, bench_settings, create_local_table, dynamodb_local_store
from keygraph.stores.dynamodb.local import DynamoDBLocal, LocalUnavailable
from server.seed.tenant import SeedSizes, build_items, seed

SIZES = SeedSizes(users=6, orders=18, groups=2, org_nodes=3, org_depth=2, shops=2, max_members=4)
TENANT = TENANTS[0]


@pytest.fixture
def seeded_local() -> Iterator[str]:
    """A DynamoDB Local of its own (the table keygraph's server expects), with a small
    tenant seeded."""
    local = DynamoDBLocal()
    try:
        local.start()
    except LocalUnavailable as exc:
        pytest.skip(str(exc))
    try:
        create_local_table(local.endpoint_url)
        store = dynamodb_local_store(local.endpoint_url)

        async def fill() -> None:
            try:
                await seed(store, TENANT, SIZES, RNG_SEED, progress=False)
            finally:
                await store.close()

        asyncio.run(fill())
        yield local.endpoint_url
    finally:
        local.stop()


@pytest.mark.dynamodb_local
def test_a_short_run_checks_the_answers_and_measures_both(
    seeded_local: str, tmp_path: Path
) -> None:
    data = load_floor_data(build_items(TENANT, SIZES, RNG_SEED), TENANT)
    ops = [op for op in operations(data) if op.name in {"Q1", "Q2", "Q3"}]
    headers = auth_headers(bench_settings(tmp_path, "dynamodb-local", seeded_local), TENANT)
    load = Load(rounds=1, seconds=0.2, concurrency=2, max_requests=20, warmup=1)

    results = compare(seeded_local, tmp_path, headers, ops, load, tmp_path)

    assert list(results) == ["Q1", "Q2", "Q3"]
    for found in results.values():
        assert found["keygraph"]["cpu_ms"] > 0
        assert found["peer"]["cpu_ms"] > 0
        assert found["ratio"] == found["peer"]["cpu_ms"] / found["keygraph"]["cpu_ms"]
    assert table(results).count("\n") == 4


def test_the_table_says_whether_each_goal_is_met() -> None:
    def op(ratio: float) -> dict[str, object]:
        side = {"cpu_ms": 1.0, "rps": 100.0, "p50_ms": 5.0}
        return {"keygraph": side, "peer": side, "ratio": ratio}

    rows = table({"Q1": op(4.5), "Q2": op(3.0), "Q3": op(5.9)}).splitlines()[2:]

    assert "| ≥ 4x | yes |" in rows[0]
    assert "| — | — |" in rows[1]
    assert "| ≥ 6x | no |" in rows[2]

"""The authorization benchmark, run small: both arms answer, and turning the guards off is
undone after each request."""

from __future__ import annotations

import pytest

from bench import authz_bench
from generated import authz
from keygraph.caller import Caller
from server.seed.tenant import SeedSizes


async def test_a_small_run(monkeypatch: pytest.MonkeyPatch) -> None:
    small = SeedSizes(users=3, orders=6, groups=1, org_nodes=1, org_depth=1, shops=1)
    monkeypatch.setattr(authz_bench, "SIZES", small)
    guard = authz.may_read_user_email
    report = await authz_bench.run(rounds=4)
    assert set(report["results"]) == {
        "Q1 admin",
        "Q1 member (own user)",
        "Q3 admin",
        "Q3 with emails, admin",
        "Q3 with emails, member",
    }
    assert all(result["on_p50_ms"] > 0 for result in report["results"].values())
    assert authz.may_read_user_email is guard


def test_guards_off_allows_everything_and_then_puts_them_back() -> None:
    nobody = Caller(None, frozenset())
    with authz_bench.guards_off():
        assert authz.may_create_user(nobody)
    assert not authz.may_create_user(nobody)

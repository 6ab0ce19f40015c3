"""The authorization benchmark, run small: both arms answer, and turning the guards off is
undone after each request."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import authz_bench
from bench.asgi import AsgiClient
from bench.queries import local_id
from bench.targets import auth_headers, compiled_app, production_settings
from generated import authz
from generated.table import TABLE
from keygraph.caller import Caller
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.seed.tenant import SeedSizes, seed


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


async def test_guards_off_reach_the_api_the_bench_measures(tmp_path: Path) -> None:
    """The API holds the guard functions themselves: off, a member reads every user's email;
    on, it is refused the others'."""
    store = EmbeddedStore(TABLE, path=tmp_path / "authz.sqlite3")
    await seed(
        store,
        "t",
        SeedSizes(users=3, orders=1, groups=1, org_nodes=1, org_depth=1, shops=1),
        progress=False,
    )
    settings = production_settings(tmp_path)
    app = compiled_app(settings, store)
    admin = AsgiClient(app, auth_headers(settings, "t"))
    first = await admin.post("/graphql", json={"query": authz_bench.FIRST_USER})
    member_id = local_id(first.json()["data"]["users"]["edges"][0]["node"]["id"])
    token = issue_token(settings, "t", member_id, roles=["member"])
    member = AsgiClient(app, {"Authorization": f"Bearer {token}"})
    body = {"query": authz_bench.Q3_EMAILS}
    on = (await member.post("/graphql", json=body)).json()
    with authz_bench.guards_off():
        off = (await member.post("/graphql", json=body)).json()
    await store.close()
    assert len(on["errors"]) == 2, on
    assert "errors" not in off, off
    assert all(edge["node"]["email"] for edge in off["data"]["users"]["edges"])

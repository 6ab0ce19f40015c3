"""The social spec's API (tests/codegen/cases/social) fuzzed with hypothesis-graphql over
HTTP, mutations and queries, valid and invalid, with ids and handles drawn from a small pool
so that writes collide: no answer is a 5xx or INTERNAL, and afterwards every invariant the
spec declares holds on the stored items."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import strategies as st
from hypothesis_graphql import Mode, from_schema, nodes

from keygraph.serve import Served, create_app
from keygraph.store import Store
from keygraph.tokens import TokenKey, issue
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, CODEC, Compiled
from tests.keygraph.api.test_writes import assert_copies_equal, by_type, items
from tests.server.fuzz.target import HUNT, STORES, check_answer, generate

SPEC = CASES / "social" / "spec.toml"
SECRET = "writes-fuzz-secret-" + "s" * 32
EXAMPLES = {"embedded": 400, "dynamodb-local": 120}
IDS = ["m1", "m2", "m3", "p1", "p2"]


def operations(sdl: str) -> st.SearchStrategy[str]:
    """Operations whose ids and strings collide often."""
    scalars = {
        "DateTime": st.datetimes(timezones=st.just(UTC)).map(lambda d: nodes.String(d.isoformat())),
        "ID": st.one_of(st.sampled_from(IDS), st.text(max_size=20)).map(nodes.String),
        "String": st.one_of(st.sampled_from(["ann", "bob", "x"]), st.text(max_size=30)).map(
            nodes.String
        ),
    }
    return st.one_of(
        from_schema(sdl, custom_scalars=scalars),
        from_schema(sdl, custom_scalars=scalars, mode=Mode.NEGATIVE),
    )


@pytest.fixture(params=STORES)
async def served(
    request: pytest.FixtureRequest,
    compiled: Callable[[Path], Compiled],
    store_factory: StoreFactory,
) -> AsyncIterator[tuple[httpx.AsyncClient, Store, str, str]]:
    package = compiled(SPEC)
    store = await store_factory(request.param, package.table)
    app = create_app(Served(package.schema, store, TokenKey(SECRET), CODEC))
    transport = httpx.ASGITransport(app=app)
    sdl = package.module("api").API.sdl
    async with httpx.AsyncClient(transport=transport, base_url="http://fuzz.test") as client:
        yield client, store, sdl, request.param


def token(subject: str, role: str) -> dict[str, str]:
    return {"authorization": f"Bearer {issue(SECRET, 'acme', subject, roles=[role])}"}


async def test_fuzzed_writes_fail_cleanly_and_keep_every_invariant(
    served: tuple[httpx.AsyncClient, Store, str, str],
) -> None:
    client, store, sdl, kind = served
    callers = [token("boss", "admin"), token("m1", "member"), token("m2", "member")]
    seen: dict[str, int] = {}
    for n, operation in enumerate(generate(operations(sdl), HUNT or EXAMPLES[kind])):
        headers = callers[n % len(callers)]
        response = await client.post("/graphql", json={"query": operation}, headers=headers)
        for error in check_answer(response, operation).get("errors", []):
            seen[error["extensions"]["code"]] = seen.get(error["extensions"]["code"], 0) + 1
    stored = await items(store)
    assert_held(stored)
    await assert_copies_equal(store)
    assert seen.get("GRAPHQL_VALIDATION_FAILED", 0) > 0
    assert len(stored) > 0, "no write got through"


def assert_held(stored: list[dict[str, Any]]) -> None:
    """One claim per member's handle and none else; each friendship both ways; each
    product counting exactly its reviews."""
    members = {(m["handle"], m["member_id"]) for m in by_type(stored, "MEMBER")}
    claims = [(h["handle"], h["member_id"]) for h in by_type(stored, "HANDLE")]
    assert sorted(claims) == sorted(members)
    pairs = {(f["member_id"], f["friend_id"]) for f in by_type(stored, "FRIEND")}
    assert pairs == {(b, a) for a, b in pairs}
    reviews = by_type(stored, "REVIEW")
    for product in by_type(stored, "PRODUCT"):
        counted = [r for r in reviews if r["product_id"] == product["product_id"]]
        assert product["review_count"] == len(counted)
    products = {p["product_id"] for p in by_type(stored, "PRODUCT")}
    assert {r["product_id"] for r in reviews} <= products

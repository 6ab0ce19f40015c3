"""Sibling relations of one wave of parents go to the store in one wave, on the social case
(tests/codegen/cases/social): a member's `claim` (a get) with its `reviews` and `friends`
(queries), for every member a document asks, compiled and by graphql-core's executor. On
the embedded store, which answers as soon as asked, a wave is the calls sent together,
whatever a network would make of their timing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from keygraph.api import ApiContext, execute
from keygraph.caller import Caller
from keygraph.plan import Put
from keygraph.store import Session, Store
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, CODEC, Compiled
from tests.keygraph.api.test_compiled_agree import IGNORE_GRAPHQL_CORE
from tests.keygraph.api.test_relations import Calls

MEMBERS = ("m1", "m2", "m3")
MEMBER = """getMember(memberId: "%s") { handle claim { memberId }
  reviews(first: 2) { edges { node { stars } } } friends { edges { node { friendId } } } }"""


@pytest.fixture
async def social(
    store_factory: StoreFactory, compiled: Callable[[Path], Compiled]
) -> tuple[Compiled, Store]:
    """The social package with members, each with the claim on its handle and a review."""
    package = compiled(CASES / "social" / "spec.toml")
    store = await store_factory("embedded", package.table)
    member = package.module("models.member").Member
    handle = package.module("models.handle").Handle
    review = package.module("models.review").Review
    for n, member_id in enumerate(MEMBERS):
        items = [
            member(member_id=member_id, handle=f"h{n}", name="M", version=1),
            handle(handle=f"h{n}", member_id=member_id),
            review(member_id=member_id, product_id="p1", stars=n + 1, version=1),
        ]
        for item in items:
            await store.put(Put(item.to_item("acme")))
    return package, store


@IGNORE_GRAPHQL_CORE
@pytest.mark.parametrize("compiled_run", [True, False])
async def test_a_waves_gets_and_queries_go_out_together(
    social: tuple[Compiled, Store], compiled_run: bool
) -> None:
    package, store = social
    document = "{ " + " ".join(f"{m}: {MEMBER % m}" for m in MEMBERS) + " }"
    calls = Calls(store)
    context = ApiContext(Session(calls, CODEC, Caller("m1", frozenset({"member"}))), "acme")
    answer = await execute(package.schema, document, context, compiled=compiled_run)
    assert "errors" not in answer, answer
    for n, member_id in enumerate(MEMBERS):
        found = answer["data"][member_id]
        assert found["claim"] == {"memberId": member_id}
        assert [edge["node"]["stars"] for edge in found["reviews"]["edges"]] == [n + 1]
        assert found["friends"]["edges"] == []
    # the members, then their claims (no batch get: a get each) with their two queries
    assert dict(calls.kinds) == {"GetItem": 2 * len(MEMBERS), "Query": 2 * len(MEMBERS)}
    assert calls.waves == 2

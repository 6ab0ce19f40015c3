"""A spec's writes through its generated API, on both stores (tests/codegen/cases/social):
every mutation, each invariant the spec declares (a unique handle's claim, a friendship's
other direction, a review's copy under its product, a product's count of reviews under its
cap, versions, generated ids and times), refusals that write nothing, and racing writes that
keep every invariant; on DynamoDB, every call they make is one the generated stack's policy
allows."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from keygraph.caller import Caller
from keygraph.keycodec import parse_datetime
from keygraph.plan import Scan
from keygraph.store import Session, Store
from keygraph.writes import owned, sweep
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, CODEC, Compiled, ask
from tests.keygraph.api.policy import allowed, recording, stack_of

SPEC = CASES / "social" / "spec.toml"
ADMIN = Caller("boss", frozenset({"admin"}))
TENANT = "acme"


def member(subject: str) -> Caller:
    return Caller(subject, frozenset({"member"}))


@pytest.fixture
async def social(
    compiled: Callable[[Path], Compiled],
    store_factory: StoreFactory,
    kind: str,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[Compiled, Store]]:
    """The social package on a new store; on DynamoDB, each call the test makes is then
    checked against the least privilege of the package's stack (stack.json)."""
    package = compiled(SPEC)
    store = await store_factory(kind, package.table)
    calls = recording(monkeypatch)
    yield package, store
    assert [call for call in calls if not allowed(stack_of(package), call)] == []
    assert calls or kind == "embedded"


async def items(store: Store) -> list[dict[str, Any]]:
    """Every item of the table, in key order."""
    found, start = [], None
    while True:
        page = await store.scan(Scan(limit=100, start=start))
        found += page.items
        start = page.last_key
        if start is None:
            return sorted(found, key=lambda item: (item["PK"], item["SK"]))


def by_type(all_items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [item for item in all_items if item.get("_type") == kind]


class Api:
    """Operations on the package's API as one caller of one tenant."""

    def __init__(self, package: Compiled, store: Store) -> None:
        self.package, self.store = package, store

    async def __call__(
        self, document: str, caller: Caller = ADMIN, tenant: str = TENANT, **variables: Any
    ) -> dict[str, Any]:
        return await ask(self.package.schema, self.store, tenant, document, variables, caller)


CREATE_MEMBER = """mutation($id: ID!, $handle: String!) {
  createMember(input: {memberId: $id, handle: $handle, name: "N"}) { member { memberId version } }
}"""
UPDATE_MEMBER = """mutation($id: ID!, $v: Int!, $handle: String) {
  updateMember(input: {memberId: $id, expectedVersion: $v, handle: $handle}) {
    member { handle version } }
}"""
HANDLE = "query($h: String!) { getHandle(handle: $h) { memberId } }"


def code(answer: dict[str, Any]) -> str:
    (error,) = answer["errors"]
    return str(error["extensions"]["code"])


async def test_a_unique_value_is_claimed_moved_and_freed(social: tuple[Compiled, Store]) -> None:
    api = Api(*social)
    made = await api(CREATE_MEMBER, member("m1"), id="m1", handle="ann")
    assert made == {"data": {"createMember": {"member": {"memberId": "m1", "version": 1}}}}
    before = await items(api.store)
    taken = await api(CREATE_MEMBER, member("m2"), id="m2", handle="ann")
    assert code(taken) == "CONFLICT"
    assert taken["errors"][0]["message"] == "the handle 'ann' is already in use"
    assert await items(api.store) == before
    moved = await api(UPDATE_MEMBER, member("m1"), id="m1", v=1, handle="anna")
    assert moved["data"] == {"updateMember": {"member": {"handle": "anna", "version": 2}}}
    assert (await api(HANDLE, h="ann"))["data"] == {"getHandle": None}
    assert (await api(HANDLE, h="anna"))["data"] == {"getHandle": {"memberId": "m1"}}
    assert "errors" not in await api(CREATE_MEMBER, member("m2"), id="m2", handle="ann")
    stale = await api(UPDATE_MEMBER, member("m1"), id="m1", v=1, handle="zed")
    assert code(stale) == "CONFLICT"
    assert stale["errors"][0]["extensions"]["currentVersion"] == 2
    deleted = await api('mutation { deleteMember(input: {memberId: "m1"}) { member { handle } } }')
    assert deleted["data"] == {"deleteMember": {"member": {"handle": "anna"}}}
    left = await items(api.store)
    assert [i["handle"] for i in by_type(left, "HANDLE")] == ["ann"]
    assert [i["member_id"] for i in by_type(left, "MEMBER")] == ["m2"]


async def test_refused_writes_write_nothing(social: tuple[Compiled, Store]) -> None:
    api = Api(*social)
    await api(CREATE_MEMBER, member("m1"), id="m1", handle="ann")
    before = await items(api.store)
    refusals: dict[str, tuple[str, Caller, dict[str, Any]]] = {
        "FORBIDDEN": (UPDATE_MEMBER, member("m2"), {"id": "m1", "v": 1, "handle": "bob"}),
        "BAD_USER_INPUT": (CREATE_MEMBER, member("m3"), {"id": "m3", "handle": "NO SPACES"}),
        "NOT_FOUND": (UPDATE_MEMBER, ADMIN, {"id": "nobody", "v": 1, "handle": "bob"}),
    }
    for expected, (document, caller, variables) in refusals.items():
        assert code(await api(document, caller, **variables)) == expected, expected
    other = await api(UPDATE_MEMBER, ADMIN, tenant="globex", id="m1", v=1, handle="bob")
    assert code(other) == "NOT_FOUND"
    product = (
        'mutation { createProduct(input: {productId: "p", title: "T"}) { product { title } } }'
    )
    assert code(await api(product, member("m1"))) == "FORBIDDEN"
    assert await items(api.store) == before


REVIEW = """mutation($m: ID!, $stars: Int!) {
  createReview(input: {memberId: $m, productId: "p1", stars: $stars}) { review { version } }
}"""
REVIEWS = """{ getProduct(productId: "p1") { reviewCount }
  productReviews(productId: "p1") { edges { node { memberId stars text version } } } }"""


async def test_copies_and_counts_follow_each_write(social: tuple[Compiled, Store]) -> None:
    api = Api(*social)
    await api(
        'mutation { createProduct(input: {productId: "p1", title: "Tea"}) { product { title } } }'
    )
    for who in ("a", "b", "c"):
        assert "errors" not in await api(REVIEW, member(who), m=who, stars=4)
    full = await api(REVIEW, member("d"), m="d", stars=5)
    assert code(full) == "BAD_USER_INPUT"
    assert "at most 3" in full["errors"][0]["message"]
    update = """mutation { updateReview(input: {memberId: "a", productId: "p1",
      expectedVersion: 1, stars: 1, text: "cold"}) { review { version } } }"""
    assert (await api(update, member("a")))["data"] == {"updateReview": {"review": {"version": 2}}}
    seen = (await api(REVIEWS))["data"]
    assert seen["getProduct"] == {"reviewCount": 3}
    nodes = [edge["node"] for edge in seen["productReviews"]["edges"]]
    assert nodes[0] == {"memberId": "a", "stars": 1, "text": "cold", "version": 2}
    delete = (
        'mutation { deleteReview(input: {memberId: "b", productId: "p1"}) { review { stars } } }'
    )
    assert "errors" not in await api(delete, member("b"))
    assert (await api(REVIEWS))["data"]["getProduct"] == {"reviewCount": 2}
    await assert_copies_equal(api.store)
    missing = await api(REVIEW.replace('"p1"', '"p9"'), member("e"), m="e", stars=3)
    assert code(missing) == "NOT_FOUND"


async def test_a_friendship_is_stored_both_ways(social: tuple[Compiled, Store]) -> None:
    api = Api(*social)
    befriend = """mutation { createFriendship(input: {memberId: "m1", friendId: "m2"})
      { friendship { friendId since } } }"""
    made = await api(befriend, member("m1"))
    since = made["data"]["createFriendship"]["friendship"]["since"]
    stored = {parse_datetime(i["since"]) for i in by_type(await items(api.store), "FRIEND")}
    assert stored == {datetime.fromisoformat(since)}  # one time, on both directions
    again = befriend.replace('memberId: "m1", friendId: "m2"', 'memberId: "m2", friendId: "m1"')
    assert code(await api(again, member("m2"))) == "CONFLICT"
    friends = '{ friendsOf(memberId: "m2") { edges { node { memberId friendId } } } }'
    edges = (await api(friends))["data"]["friendsOf"]["edges"]
    assert edges == [{"node": {"memberId": "m2", "friendId": "m1"}}]
    unfriend = """mutation { deleteFriendship(input: {memberId: "m2", friendId: "m1"}) {
      friendship { since } } }"""
    assert code(await api(unfriend, member("m3"))) == "FORBIDDEN"
    assert "errors" not in await api(unfriend, member("m1"))
    assert by_type(await items(api.store), "FRIEND") == []


POST = """mutation { createPost(input: {memberId: "m1", text: "hello"})
  { post { postId postedAt } } }"""


async def test_a_create_needs_the_parents_the_spec_requires(
    social: tuple[Compiled, Store],
) -> None:
    api = Api(*social)
    orphan = await api(POST, member("m1"))
    assert code(orphan) == "NOT_FOUND"
    assert orphan["errors"][0]["message"] == "no Member at member_id 'm1'"
    assert await items(api.store) == []
    await api(CREATE_MEMBER, member("m1"), id="m1", handle="ann")
    assert "errors" not in await api(POST, member("m1"))
    assert len(by_type(await items(api.store), "POST")) == 1


DRAFT = """mutation($expires: Long) {
  createDraft(input: {memberId: "m1", text: "half", expiresAt: $expires})
  { draft { draftId expiresAt version } } }"""
SUPERSEDE = """mutation($id: ID!, $at: Long!) {
  updateDraft(input: {memberId: "m1", draftId: $id, expectedVersion: 1, expiresAt: $at})
  { draft { expiresAt } } }"""


async def test_a_create_sets_the_expiry_the_spec_gives(social: tuple[Compiled, Store]) -> None:
    api = Api(*social)
    await api(CREATE_MEMBER, member("m1"), id="m1", handle="ann")
    month = 30 * 86400
    before = int(time.time())
    made = (await api(DRAFT, member("m1")))["data"]["createDraft"]["draft"]
    assert before + month <= made["expiresAt"] <= int(time.time()) + month
    (stored,) = by_type(await items(api.store), "DRAFT")
    assert stored["expires_at"] == made["expiresAt"]
    soon = before + 60
    superseded = await api(SUPERSEDE, member("m1"), id=made["draftId"], at=soon)
    assert superseded["data"] == {"updateDraft": {"draft": {"expiresAt": soon}}}
    given = (await api(DRAFT, member("m1"), expires=soon))["data"]["createDraft"]["draft"]
    assert given["expiresAt"] == soon
    stored_at = sorted(item["expires_at"] for item in by_type(await items(api.store), "DRAFT"))
    assert stored_at == [soon, soon]


async def test_a_create_generates_what_the_spec_says(social: tuple[Compiled, Store]) -> None:
    api = Api(*social)
    await api(CREATE_MEMBER, member("m1"), id="m1", handle="ann")
    before = datetime.now(UTC)
    first, second = [(await api(POST, member("m1")))["data"]["createPost"]["post"] for _ in "ab"]
    assert first["postId"] != second["postId"]
    assert len(first["postId"]) == 26  # a ULID: ids sort by the time they were made
    assert first["postId"] < second["postId"] or first["postedAt"] == second["postedAt"]
    assert before <= datetime.fromisoformat(first["postedAt"]) <= datetime.now(UTC)
    given = """mutation { createPost(input: {memberId: "m1", text: "x", postId: "mine"})
      { post { postId } } }"""
    assert code(await api(given, member("m1"))) == "GRAPHQL_VALIDATION_FAILED"
    posts = '{ postsBy(memberId: "m1") { edges { node { postId text } } } }'
    edges = (await api(posts))["data"]["postsBy"]["edges"]
    assert sorted(edge["node"]["postId"] for edge in edges) == sorted(
        [first["postId"], second["postId"]]
    )


async def test_racing_writes_keep_every_invariant(social: tuple[Compiled, Store]) -> None:
    api = Api(*social)
    claims = await asyncio.gather(
        *(api(CREATE_MEMBER, member(f"m{i}"), id=f"m{i}", handle="same") for i in range(8))
    )
    assert sorted(code(a) if "errors" in a else "OK" for a in claims) == ["CONFLICT"] * 7 + ["OK"]
    await api(
        'mutation { createProduct(input: {productId: "p1", title: "Tea"}) { product { title } } }'
    )
    reviews = await asyncio.gather(
        *(api(REVIEW, member(f"r{i}"), m=f"r{i}", stars=3) for i in range(8))
    )
    assert sum("errors" not in a for a in reviews) == 3
    (winner,) = [a["data"]["createMember"]["member"]["memberId"] for a in claims if a["data"]]
    handles = [f"h{i}" for i in range(4)]
    updates = await asyncio.gather(
        *(api(UPDATE_MEMBER, ADMIN, id=winner, v=1, handle=h) for h in handles)
    )
    assert sorted(code(a) if "errors" in a else "OK" for a in updates) == ["CONFLICT"] * 3 + ["OK"]
    (moved,) = [a["data"]["updateMember"]["member"]["handle"] for a in updates if a["data"]]
    stored = await items(api.store)
    assert [(i["handle"], i["member_id"]) for i in by_type(stored, "HANDLE")] == [(moved, winner)]
    assert len(by_type(stored, "MEMBER")) == 1
    (product,) = by_type(stored, "PRODUCT")
    assert product["review_count"] == len(by_type(stored, "REVIEW")) <= 3
    await assert_copies_equal(api.store)


async def assert_copies_equal(store: Store) -> None:
    """Each review and its copy under the product hold the same values."""
    stored = await items(store)
    shown = ("member_id", "product_id", "stars", "text", "version")

    def values(kind: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(item.get(a) for a in shown) for item in by_type(stored, kind))

    assert values("REVIEW") == values("PRODUCT_REVIEW")


DELETE_MEMBER = 'mutation { deleteMember(input: {memberId: "m1"}) { member { handle } } }'
BEFRIEND = """mutation { createFriendship(input: {memberId: "m1", friendId: "m2"})
  { friendship { since } } }"""
PRODUCT = 'mutation { createProduct(input: {productId: "p1", title: "Tea"}) { product { title } } }'


async def owner_with_items(api: Api, posts: int) -> None:
    """Member m1 with `posts` posts, a review of p1 (counted, copied under it) and a
    friendship with m2 (stored both ways)."""
    for who, handle in (("m1", "ann"), ("m2", "bob")):
        await api(CREATE_MEMBER, member(who), id=who, handle=handle)
    await api(PRODUCT)
    assert "errors" not in await api(REVIEW, member("m1"), m="m1", stars=4)
    assert "errors" not in await api(BEFRIEND, member("m1"))
    for _ in range(posts):
        assert "errors" not in await api(POST, member("m1"))


def left_of_m1(stored: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """What of m1's is stored: its items, their copies and the tasks that remove them."""
    return [
        (item["_type"] if "_type" in item else item["PK"], item["SK"])
        for item in stored
        if "m1" in (item.get("member_id"), item.get("friend_id")) or item["PK"].startswith("~")
    ]


async def test_a_delete_takes_what_it_owns_with_what_that_keeps(
    social: tuple[Compiled, Store],
) -> None:
    api = Api(*social)
    await owner_with_items(api, posts=3)
    assert "errors" not in await api(DELETE_MEMBER, member("m1"))
    stored = await items(api.store)
    assert left_of_m1(stored) == []
    (product,) = by_type(stored, "PRODUCT")
    assert product["review_count"] == 0
    assert [i["member_id"] for i in by_type(stored, "MEMBER")] == ["m2"]
    assert by_type(stored, "FRIEND") == []


async def test_what_a_delete_leaves_a_sweep_finishes(
    social: tuple[Compiled, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delete that stops after one page (a request cut short, a process killed) has
    removed the owner and left its task; a sweep, in any process, removes the rest."""
    package, store = social
    api = Api(package, store)
    await owner_with_items(api, posts=owned.PAGE + 5)
    monkeypatch.setattr(owned, "INLINE_SECONDS", 0.0)
    assert "errors" not in await api(DELETE_MEMBER, member("m1"))
    left = left_of_m1(await items(store))
    assert [kind for kind, _ in left].count("POST") == 5
    assert [kind for kind, _ in left if kind.startswith("~")] == [owned.TASKS]
    assert (await api(HANDLE, h="ann"))["data"] == {"getHandle": None}
    writes = package.module("api").API.writes
    assert await sweep(Session(store, CODEC), writes, 10.0) == (1, 0)
    assert left_of_m1(await items(store)) == []
    assert await sweep(Session(store, CODEC), writes, 10.0) == (0, 0)

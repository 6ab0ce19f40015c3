"""Identical query relations in one request read once, on the social case
(tests/codegen/cases/social): the same pattern with the same key and page arguments under
several parents and aliases is one store call whose page every one of them shows, compiled
and by graphql-core's executor alike; another page size, cursor or key is a call of its
own, a bad cursor fails its own fields only, and nothing is shared across requests or past
a mutation's write; a read given up by one asker is read again by those sharing it, or
not sent if it had not gone out, whether the store answers inline or not."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from keygraph.api import ApiContext, execute
from keygraph.api.loads import Loads
from keygraph.caller import Caller
from keygraph.plan import Put
from keygraph.store import Session, Store
from keygraph.stores.counting import CountingStore
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, CODEC, Compiled
from tests.keygraph.api.test_compiled_agree import IGNORE_GRAPHQL_CORE
from tests.keygraph.api.test_relations import Calls

MEMBERS = ("m1", "m2")
PRODUCTS = ("p1", "p2", "p3")
READER = Caller("m2", frozenset({"member"}))
REVIEWS = "edges { node { productId stars } } pageInfo { endCursor }"
SHARED = f"""query($after: String) {{
  a: getMember(memberId: "m1") {{
    x: reviews(first: 2) {{ {REVIEWS} }}
    y: reviews(first: 2) {{ {REVIEWS} }}
    z: reviews(first: 1) {{ {REVIEWS} }}
    next: reviews(first: 2, after: $after) {{ {REVIEWS} }}
  }}
  b: getMember(memberId: "m1") {{
    x: reviews(first: 2) {{ {REVIEWS} }}
    next: reviews(first: 2, after: $after) {{ {REVIEWS} }}
    bad: reviews(first: 2, after: "not a cursor") {{ {REVIEWS} }}
  }}
  c: getMember(memberId: "m2") {{
    x: reviews(first: 2) {{ {REVIEWS} }}
    y: reviews(first: 2) {{ {REVIEWS} }}
  }}
}}"""


@pytest.fixture
async def social(
    kind: str, store_factory: StoreFactory, compiled: Callable[[Path], Compiled]
) -> tuple[Compiled, Store]:
    """The social package with two members, each with a review of three products."""
    package = compiled(CASES / "social" / "spec.toml")
    store = await store_factory(kind, package.table)
    member = package.module("models.member").Member
    review = package.module("models.review").Review
    product = package.module("models.product").Product
    for n, member_id in enumerate(MEMBERS):
        item = member(member_id=member_id, handle=f"h{n}", name="M", version=1)
        await store.put(Put(item.to_item("acme")))
        for stars, product_id in enumerate(PRODUCTS, start=1):
            item = review(member_id=member_id, product_id=product_id, stars=stars, version=1)
            await store.put(Put(item.to_item("acme")))
    for product_id in PRODUCTS:
        item = product(product_id=product_id, title="P", review_count=0)
        await store.put(Put(item.to_item("acme")))
    return package, store


async def run(
    package: Compiled,
    store: Store,
    document: str,
    compiled_run: bool,
    variables: dict[str, Any] | None = None,
    caller: Caller | None = READER,
) -> tuple[dict[str, Any], dict[str, int]]:
    """The document's answer in a request of its own, and the store calls it made."""
    calls = Calls(store)
    context = ApiContext(Session(calls, CODEC, caller), "acme")
    answer = await execute(package.schema, document, context, variables, compiled=compiled_run)
    return answer, dict(calls.kinds)


def stars(connection: dict[str, Any]) -> list[int]:
    return [edge["node"]["stars"] for edge in connection["edges"]]


@IGNORE_GRAPHQL_CORE
@pytest.mark.parametrize("compiled_run", [True, False])
async def test_identical_queries_under_parents_and_aliases_read_once(
    social: tuple[Compiled, Store], compiled_run: bool
) -> None:
    package, store = social
    first, _ = await run(package, store, SHARED, compiled_run, {"after": None})
    cursor = first["data"]["a"]["x"]["pageInfo"]["endCursor"]
    answer, kinds = await run(package, store, SHARED, compiled_run, {"after": cursor})
    data = answer["data"]
    a, b, c = data["a"], data["b"], data["c"]
    assert stars(a["x"]) == [1, 2]
    assert a["x"] == a["y"] == b["x"]
    assert stars(a["z"]) == [1]
    assert stars(a["next"]) == [3]
    assert a["next"] == b["next"]
    assert c["x"] == c["y"]
    assert stars(c["x"]) == [1, 2]
    # the bad cursor fails its own field only, and the reads beside it are shared still
    assert b["bad"] is None
    assert [error["path"] for error in answer["errors"]] == [["b", "bad"]]
    # three member gets; m1's first two, first one, and after the cursor; m2's first two;
    # the bad cursor fails before any read
    assert kinds == {"GetItem": 3, "Query": 4}


@IGNORE_GRAPHQL_CORE
@pytest.mark.parametrize("compiled_run", [True, False])
async def test_a_read_is_shared_within_its_request_only(
    social: tuple[Compiled, Store], compiled_run: bool
) -> None:
    package, store = social
    document = '{ getMember(memberId: "m1") { reviews(first: 5) { edges { node { stars } } } } }'
    before, kinds = await run(package, store, document, compiled_run)
    assert stars(before["data"]["getMember"]["reviews"]) == [1, 2, 3]
    assert kinds == {"GetItem": 1, "Query": 1}
    review = package.module("models.review").Review
    added = review(member_id="m1", product_id="p4", stars=5, version=1)
    await store.put(Put(added.to_item("acme")))
    after, kinds = await run(package, store, document, compiled_run)  # a request of its own
    assert stars(after["data"]["getMember"]["reviews"]) == [1, 2, 3, 5]
    assert kinds == {"GetItem": 1, "Query": 1}


@IGNORE_GRAPHQL_CORE
@pytest.mark.parametrize("compiled_run", [True, False])
async def test_a_mutation_reads_afresh_what_a_write_before_it_changed(
    social: tuple[Compiled, Store], compiled_run: bool
) -> None:
    package, store = social
    shown = "member { reviews(first: 5) { edges { node { stars } } } }"
    document = f"""mutation {{
      first: updateMember(input: {{memberId: "m1", expectedVersion: 1, name: "A"}}) {{ {shown} }}
      review: createReview(input: {{memberId: "m1", productId: "p9", stars: 4}}) {{
        review {{ stars }} }}
      again: updateMember(input: {{memberId: "m1", expectedVersion: 2, name: "B"}}) {{ {shown} }}
    }}"""
    product = package.module("models.product").Product
    await store.put(Put(product(product_id="p9", title="P", review_count=0).to_item("acme")))
    answer, kinds = await run(package, store, document, compiled_run, caller=None)
    assert "errors" not in answer, answer
    data = answer["data"]
    assert stars(data["first"]["member"]["reviews"]) == [1, 2, 3]
    assert stars(data["again"]["member"]["reviews"]) == [1, 2, 3, 4]
    assert kinds["Query"] == 2


@pytest.mark.parametrize("inline", [False, True])
async def test_a_read_given_up_by_one_field_is_read_again_by_those_sharing_it(
    store_factory: StoreFactory, inline: bool
) -> None:
    store = CountingStore(await store_factory("embedded")) if inline else None
    begun = {name: asyncio.Event() for name in ("first", "second", "alone", "third")}
    gate = asyncio.Event()

    async def read(name: str) -> str:
        begun[name].set()
        await gate.wait()
        return f"page of {name}"

    loads = Loads()
    first = asyncio.ensure_future(loads.queries([("k", partial(read, "first"))], store))
    await _begun(begun["first"])
    second = asyncio.ensure_future(loads.queries([("k", partial(read, "second"))], store))
    alone = asyncio.ensure_future(loads.queries([(None, partial(read, "alone"))], store))
    await _begun(begun["alone"])  # a read keyed None is never shared
    assert not begun["second"].is_set()  # the second shares the first's read
    first.cancel()  # its field was nulled: the read it shared is read again
    await _begun(begun["second"])
    gate.set()
    assert await second == ["page of second"]
    assert await alone == ["page of alone"]
    assert first.cancelled()
    assert await loads.queries([("k", partial(read, "third"))], store) == ["page of second"]
    assert not begun["third"].is_set()


async def test_a_read_given_up_before_its_turn_on_an_inline_store_is_not_sent(
    store_factory: StoreFactory,
) -> None:
    store = CountingStore(await store_factory("embedded"))
    begun = {name: asyncio.Event() for name in ("held", "gone", "again")}
    gate = asyncio.Event()

    async def read(name: str) -> str:
        begun[name].set()
        await gate.wait()
        return f"page of {name}"

    loads = Loads()
    held = asyncio.ensure_future(loads.queries([(None, partial(read, "held"))], store))
    gone = asyncio.ensure_future(loads.queries([("k", partial(read, "gone"))], store))
    await _begun(begun["held"])  # sent together, read in turn: "gone" waits behind it
    gone.cancel()
    gate.set()
    assert await held == ["page of held"]
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert not begun["gone"].is_set()
    assert await loads.queries([("k", partial(read, "again"))], store) == ["page of again"]


async def test_a_failed_read_is_each_sharers_exception() -> None:
    calls = 0

    async def read() -> None:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)  # as a store call does: the others ask while it is read
        raise ValueError("bad cursor")

    loads = Loads()
    answers = await asyncio.gather(
        loads.queries([("k", read), ("k", read)]), loads.queries([("k", read)])
    )
    assert calls == 1
    assert all(isinstance(answer, ValueError) for found in answers for answer in found)


async def _begun(event: asyncio.Event) -> None:
    async with asyncio.timeout(5):
        await event.wait()

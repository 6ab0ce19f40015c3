"""A generated package's API over HTTP (keygraph.serve), in process on both stores: the
caller and tenant only from a valid bearer token, another tenant's items never answered,
a cursor bound to its caller, GraphQL-over-HTTP statuses and media type, the body capped
and the root fields counted before anything runs; a tenant past its budget throttled while
another is served."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import httpx
import pytest
from graphql import get_operation_ast, parse

from keygraph.api import estimate
from keygraph.plan import Put
from keygraph.serve import Served
from keygraph.serve.budget import TenantBudget
from keygraph.serve.document_cache import DocumentCache
from keygraph.serve.literals import split
from keygraph.store import Store
from keygraph.tokens import TokenKey, issue
from tests.keygraph.api.conftest import CODEC, SECRET, Compiled, bearer, post, served_client
from tests.keygraph.api.serving import unreported


@pytest.fixture
async def client(shop: tuple[Compiled, Store]) -> AsyncIterator[httpx.AsyncClient]:
    package, store = shop
    served = Served(package.schema, store, TokenKey(SECRET), CODEC, max_body_bytes=4096)
    async with served_client(served) as c:
        yield c


CATALOG = "query($after: String) { catalog(first: 2, after: $after) { edges { node { sku } } "
CATALOG += "pageInfo { hasNextPage endCursor } } }"


async def test_a_token_names_the_caller_and_pages_continue(client: httpx.AsyncClient) -> None:
    refused = await post(client, {"query": CATALOG})
    assert refused.status_code == 401
    assert refused.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    forged = issue("another-secret-" + "x" * 32, "acme", "u1")
    wrong = await post(client, {"query": CATALOG}, authorization=f"Bearer {forged}")
    assert wrong.status_code == 401
    first = await post(client, {"query": CATALOG}, **bearer())
    assert first.status_code == 200
    assert first.headers["content-type"].startswith("application/graphql-response+json")
    page = first.json()["data"]["catalog"]
    after = page["pageInfo"]["endCursor"]
    rest = await post(client, {"query": CATALOG, "variables": {"after": after}}, **bearer())
    skus = [e["node"]["sku"] for e in page["edges"] + rest.json()["data"]["catalog"]["edges"]]
    assert sorted(skus) == ["COFFEE", "MATE", "TEA"]
    stolen = await post(
        client, {"query": CATALOG, "variables": {"after": after}}, **bearer(subject="u2")
    )
    assert stolen.json()["errors"][0]["extensions"]["code"] == "INVALID_CURSOR"


async def test_a_tenant_reads_only_its_own_items(
    client: httpx.AsyncClient, shop: tuple[Compiled, Store]
) -> None:
    package, store = shop
    orders = package.module("models.order")
    day = "2026-04-18"
    money = package.module("models.money").Money(amount=900, currency="EUR")
    status = package.module("models.enums").OrderStatus.PAID
    order = orders.Order(customer_id="c1", order_id="O1", placed_on=day, status=status, total=money)
    await store.put(Put(order.to_item("acme")))
    query = '{ orderWithItems(customerId: "c1", placedOn: "2026-04-18", orderId: "O1") '
    query += "{ edges { node { __typename ... on Order { orderId status } } } } }"
    mine = (await post(client, {"query": query}, **bearer("acme"))).json()
    assert mine["data"]["orderWithItems"]["edges"] == [
        {"node": {"__typename": "Order", "orderId": "O1", "status": "PAID"}}
    ]
    theirs = (await post(client, {"query": query}, **bearer("globex"))).json()
    assert theirs["data"]["orderWithItems"]["edges"] == []


async def test_what_is_refused_before_anything_runs(client: httpx.AsyncClient) -> None:
    huge = await post(client, {"query": "{ catalog { edges { cursor } } }", "pad": "x" * 5000})
    assert huge.status_code == 401  # no token: refused before the body is read
    huge = await post(
        client, {"query": "{ catalog { edges { cursor } } }", "pad": "x" * 5000}, **bearer()
    )
    assert (huge.status_code, huge.json()["errors"][0]["extensions"]["code"]) == (
        413,
        "REQUEST_TOO_LARGE",
    )
    broken = await post(client, {"query": "{ catalog {"}, **bearer())
    assert broken.status_code == 400
    unknown = await post(client, {"query": "{ nothing }"}, **bearer())
    assert unknown.status_code == 400
    wide = "{ " + " ".join(f"a{n}: catalog(first: 1) {{ edges {{ cursor }} }}" for n in range(31))
    many = await post(client, {"query": wide + " }"}, **bearer())
    assert (many.status_code, many.json()["errors"][0]["extensions"]["code"]) == (
        400,
        "QUERY_TOO_COMPLEX",
    )
    spread = "query { ...A ...A } fragment A on Query { " + wide[2:] + " }"
    hidden = await post(client, {"query": spread}, **bearer())
    assert hidden.json()["errors"][0]["extensions"]["code"] == "QUERY_TOO_COMPLEX"
    not_json = await client.post("/graphql", content=b"[1, 2]", headers=bearer())
    assert not_json.status_code == 400
    typed = "query($s: ID!) { product(sku: $s) { title } }"
    bad = await post(client, {"query": typed, "variables": {"s": {"x": 1}}}, **bearer())
    assert bad.status_code == 400
    assert "data" not in bad.json()
    got = await client.get(
        "/graphql", params={"query": '{ product(sku: "TEA") { title } }'}, headers=bearer()
    )
    assert unreported(got.json()) == {"data": {"product": {"title": "Tea"}}}


def _fragment_bomb(levels: int) -> str:
    """A document of a few hundred characters whose fields double with each fragment."""
    fragments = [f"fragment F{n} on Query {{ ...F{n + 1} ...F{n + 1} }}" for n in range(levels)]
    fragments.append(
        f"fragment F{levels} on Query {{ catalog(first: 1) {{ edges {{ cursor }} }} }}"
    )
    return "query { ...F0 } " + " ".join(fragments)


async def test_a_document_is_bounded_before_it_is_validated(client: httpx.AsyncClient) -> None:
    bomb = _fragment_bomb(30)  # 2**30 fields once spread: refused by counting, linearly
    assert len(bomb) < 3000
    refused = await post(client, {"query": bomb}, **bearer())
    assert (refused.status_code, refused.json()["errors"][0]["extensions"]["code"]) == (
        400,
        "QUERY_TOO_COMPLEX",
    )
    assert "fields" in refused.json()["errors"][0]["message"]
    small = await post(client, {"query": _fragment_bomb(2)}, **bearer())
    assert small.status_code == 200, small.json()


async def test_a_document_past_its_tokens_is_refused(shop: tuple[Compiled, Store]) -> None:
    package, store = shop
    served = Served(package.schema, store, TokenKey(SECRET), CODEC, max_tokens=20)
    async with served_client(served) as client:
        few = await post(client, {"query": "{ catalog { edges { cursor } } }"}, **bearer())
        assert few.status_code == 200
        many = "{ " + " ".join(f"a{n}: catalog {{ edges {{ cursor }} }}" for n in range(4)) + " }"
        refused = await post(client, {"query": many}, **bearer())
        assert refused.status_code == 400
        assert "tokens" in refused.json()["errors"][0]["message"]


async def test_a_tenant_past_its_budget_is_throttled_while_another_is_served(
    shop: tuple[Compiled, Store],
) -> None:
    package, store = shop
    query = "{ catalog(first: 3) { edges { node { sku } } } }"
    document = parse(query)
    operation = get_operation_ast(document)
    assert operation is not None
    cost = estimate(package.schema, operation, {}, None)
    assert cost is not None
    assert cost > 1
    budget = TenantBudget(2 * cost, 1.0, clock=lambda: 0.0)  # time stands still: no refill
    served = Served(package.schema, store, TokenKey(SECRET), CODEC, budget=budget)
    async with served_client(served) as client:
        for _ in range(2):
            assert (await post(client, {"query": query}, **bearer("acme"))).status_code == 200
        spent = await post(client, {"query": query}, **bearer("acme"))
        assert spent.status_code == 429
        assert spent.headers["retry-after"] == str(cost)
        (error,) = spent.json()["errors"]
        assert error["extensions"] == {"code": "THROTTLED", "retryAfter": cost}
        other = await post(client, {"query": query}, **bearer("globex"))
        assert other.status_code == 200
        assert len(other.json()["data"]["catalog"]["edges"]) == 3


async def test_valid_documents_are_kept_and_remembered_tokens_still_expire(
    shop: tuple[Compiled, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    package, store = shop
    served = Served(
        package.schema, store, TokenKey(SECRET), CODEC, documents=DocumentCache(1, 10_000)
    )
    invalid = "{ catalog(first: 2) { edges { node { nope } } } }"
    token = bearer()

    def kept(text: str) -> object:
        """What the cache keeps of a text with literals: its shape's entry."""
        found = split(text)
        assert found is not None
        return served.documents.get((found.key,))

    async with served_client(served) as c:
        for _ in range(2):
            answer = await post(c, {"query": CATALOG}, **bearer())
            assert answer.json()["data"]["catalog"]["pageInfo"]["hasNextPage"]
            refused = await post(c, {"query": invalid}, **bearer())
            assert refused.json()["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        assert kept(CATALOG) is not None
        assert kept(invalid) is None
        unnamed = await post(c, {"query": CATALOG, "operationName": "Other"}, **bearer())
        assert unnamed.status_code == 400
        other = "{ catalog(first: 1) { edges { node { sku } } } }"
        assert (await post(c, {"query": other}, **bearer())).status_code == 200
        assert kept(CATALOG) is None  # one kept: the older one left
        assert (await post(c, {"query": CATALOG}, **token)).status_code == 200
        later = time.time() + 2 * 86400
        monkeypatch.setattr(time, "time", lambda: later)
        expired = await post(c, {"query": CATALOG}, **token)
        assert expired.status_code == 401
        assert "expired" in expired.json()["errors"][0]["message"]

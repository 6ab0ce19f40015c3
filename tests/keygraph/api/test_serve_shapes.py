"""`keygraph serve` finds a document whose text is new by its shape (its literals lifted
into variables: keygraph/serve/literals.py) when one of that shape was prepared before,
and answers it byte for byte as it answers the text prepared afresh: its own literals
decide its cost, its limits, its refusals and its answer."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
import pytest
from graphql import validate as graphql_validate

from keygraph.serve import Served, admission
from keygraph.serve.document_cache import DocumentCache
from keygraph.store import Store
from keygraph.tokens import TokenKey
from tests.keygraph.api.conftest import CODEC, SECRET, Compiled, bearer, post, served_client

SHOP = """{{ product(sku: {sku}) {{ sku title }}
  catalog(first: {first}) {{ edges {{ node {{ sku }} }} }} node(id: {id}) {{ id }} }}"""
"""A document of three literals, an error's place after each of them (a bad id's)."""
SEED = SHOP.format(sku='"TEA"', first=2, id='"bogus"')
ORDER = """{{ orderWithItems(customerId: "c1", placedOn: {date}, orderId: "o1", first: 2) {{
  pageInfo {{ hasNextPage }} }} }}"""
"""A document of a custom scalar's literal (a Date)."""
A_DATE = ORDER.format(date='"2024-02-29"')


def shop_query(sku: str = '"MATE"', first: object = 1, id: str = '"nope"') -> str:
    return SHOP.format(sku=sku, first=first, id=id)


class Client:
    """A member of acme asking the webshop served in dev mode."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def ask(
        self, query: str, variables: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any], str | None]:
        """The status, the body, and how the document was found (None when refused before
        it was found); the body without the worker's cache report."""
        body = {"query": query, "variables": variables or {}}
        response = await post(self.client, body, **bearer("acme", "u1"))
        answer: dict[str, Any] = response.json()
        report = answer.get("extensions", {}).pop("documentCache", None)
        return response.status_code, answer, None if report is None else report["request"]


Serve = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture
def serve(shop: tuple[Compiled, Store]) -> Serve:
    """`async with serve(**given) as api`: the webshop served in dev mode with `given`."""
    package, store = shop

    @asynccontextmanager
    async def open_api(**given: Any) -> AsyncIterator[Client]:
        served = Served(package.schema, store, TokenKey(SECRET), CODEC, dev=True, **given)
        async with served_client(served) as client:
            yield Client(client)

    return open_api


async def afresh(
    serve: Serve, query: str, variables: dict[str, Any] | None = None, **given: Any
) -> str:
    """The answer of a worker served with `given` that never saw `query`'s shape, as JSON
    text."""
    async with serve(**given) as fresh:
        status, body, found = await fresh.ask(query, variables)
        assert found in ("prepared", None)
        return json.dumps([status, body])


async def test_documents_differing_in_literals_are_prepared_once(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    validated: list[object] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        validated.append(args)
        return graphql_validate(*args, **kwargs)

    monkeypatch.setattr(admission, "validate", counted)
    async with serve() as api:
        found = [(await api.ask(query))[2] for query in (SEED, shop_query(), shop_query())]
        assert found == ["prepared", "shape", "shape"]
        assert len(validated) == 1
        _, body, _ = await api.ask(shop_query('"COFFEE"', 3))
        assert body["data"]["product"] == {"sku": "COFFEE", "title": "Coffee"}
        assert len(body["data"]["catalog"]["edges"]) == 3
        assert (await api.ask(SEED + " "))[2] == "prepared"  # another shape
        assert len(validated) == 2


@pytest.mark.parametrize(
    ("sku", "first", "id"),
    [
        ('"MATE"', 1, '"nope"'),
        ('"A-LONGER-SKU-THAN-THE-FIRST"', 0, '"bogus"'),
        ('"T\\u0045A"', 3, '"\\"quoted\\""'),
        ('"TEA"', 101, '"bogus"'),  # over the catalog's page: BAD_USER_INPUT at its field
        ('"TEA"', -1, '"bogus"'),
    ],
)
async def test_an_answer_by_shape_is_the_answer_as_written(
    serve: Serve, sku: str, first: int, id: str
) -> None:
    query = shop_query(sku, first, id)
    async with serve() as api:
        await api.ask(SEED)
        status, body, found = await api.ask(query)
        assert found == "shape"
        assert json.dumps([status, body]) == await afresh(serve, query)


async def test_a_shapes_literals_decide_its_cost(serve: Serve) -> None:
    catalog = "{ catalog(first: %d) { edges { node { sku } } } }"
    async with serve(max_cost=5) as api:
        assert (await api.ask(catalog % 3))[2] == "prepared"
        status, body, found = await api.ask(catalog % 10)
        assert (status, found) == (400, "shape")
        [error] = body["errors"]
        assert error["extensions"] == {"code": "QUERY_TOO_COMPLEX", "cost": 10, "limit": 5}
        assert json.dumps([status, body]) == await afresh(serve, catalog % 10, max_cost=5)
        status, body, found = await api.ask(catalog % 4)
        assert (status, found) == (200, "shape")
        assert body["extensions"]["cost"]["requested"] == 4


async def test_a_shapes_document_with_variables_that_do_not_coerce_is_run_as_written(
    serve: Serve,
) -> None:
    by_variable = 'query($f: Int) { product(sku: "%s") { sku } '
    by_variable += "catalog(first: $f) { edges { node { sku } } } }"
    async with serve() as api:
        assert (await api.ask(by_variable % "TEA", {"f": 1}))[2] == "prepared"
        status, body, found = await api.ask(by_variable % "MATE", {"f": "x"})
        assert (status, found) == (400, "prepared")
        assert json.dumps([status, body]) == await afresh(serve, by_variable % "MATE", {"f": "x"})
        assert (await api.ask(by_variable % "COFFEE", {"f": 2}))[2] == "shape"


@pytest.mark.parametrize(
    ("query", "valid"),
    [
        (shop_query(first='"x"'), False),  # a String where an Int goes: another shape
        (shop_query(first=2147483648), False),  # an Int past 32 bits: the shape's
        (shop_query(first=1.5), False),  # a Float where an Int goes: another shape
        (shop_query(sku="1.5"), False),  # a Float where an ID goes: another shape
        (ORDER.format(date='"2024-02-30"'), False),  # no Date: the shape's
        (shop_query(sku="7"), True),  # an Int where an ID goes: another shape
        (shop_query(sku='"""TEA"""'), True),  # a block string: another shape
    ],
)
async def test_a_literal_its_shape_cannot_take_is_answered_as_written(
    serve: Serve, query: str, valid: bool
) -> None:
    async with serve() as api:
        await api.ask(SEED)
        await api.ask(ORDER.format(date='"2024-01-31"'))
        status, body, found = await api.ask(query)
        assert found == ("prepared" if valid else None)
        if not valid:
            assert status == 400
            assert {e["extensions"]["code"] for e in body["errors"]} == {
                "GRAPHQL_VALIDATION_FAILED"
            }
        assert json.dumps([status, body]) == await afresh(serve, query)
        assert (await api.ask(A_DATE))[2] == "shape"


async def test_a_flood_of_literals_holds_one_entry(serve: Serve) -> None:
    documents = DocumentCache(16, 100_000)
    async with serve(documents=documents) as api:
        for index in range(40):
            status, body, found = await api.ask(shop_query(f'"SKU{index}"', index % 5))
            assert (status, found) == (200, "prepared" if index == 0 else "shape"), body
            status, body, _ = await api.ask(shop_query(f'"SKU{index}"', f'"{index}"'))
            assert body["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        assert len(documents) == 1
        assert documents.chars == len(shop_query('"SKU0"', 0))
        for index in range(40):  # as many shapes: each an entry, within the bounds
            await api.ask(shop_query() + "#" * index)
        assert len(documents) == 16

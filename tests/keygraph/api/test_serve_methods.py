"""keygraph serve's /graphql by HTTP method: GET and HEAD run queries from the URL alone (a
HEAD's body is never read, so a mutation in it never runs), POST runs what its body holds,
and any other method is 405 with a code and an Allow header, writing nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from tests.conftest import StoreFactory
from tests.keygraph.api.served_target import open_served
from tests.server.fuzz.target import Target

MUTATION = 'mutation { createGroup(input: {name: "by method"}) { id } }'


@pytest.fixture
async def target(store_factory: StoreFactory) -> AsyncIterator[Target]:
    async with open_served("embedded", store_factory) as (app, _):
        yield app


async def test_a_head_never_runs_the_mutation_its_body_holds(target: Target) -> None:
    before = await target.partition("acme")
    body = json.dumps({"query": MUTATION}).encode()
    head = await target.send(body, method="HEAD")
    assert head.status_code == 400  # no query in its URL
    in_url = await target.client.head("/graphql", params={"query": MUTATION}, headers=target.acme)
    assert in_url.status_code == 405
    query = await target.client.head(
        "/graphql", params={"query": "{ viewer { tenant } }"}, headers=target.acme
    )
    assert (query.status_code, query.content) == (200, b"")
    assert await target.partition("acme") == before
    posted = await target.send(body)  # the same body POSTed writes
    assert posted.json()["data"]["createGroup"]["id"]
    assert await target.partition("acme") != before


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"])
async def test_another_method_is_refused_with_a_code(target: Target, method: str) -> None:
    before = await target.partition("acme")
    refused = await target.send(json.dumps({"query": MUTATION}).encode(), method=method)
    assert refused.status_code == 405
    assert refused.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    assert refused.headers["allow"] == "GET, HEAD, POST"
    assert await target.partition("acme") == before

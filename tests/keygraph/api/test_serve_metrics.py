"""Prometheus metrics of `keygraph serve`'s app, in process: /metrics only to the bearers of
its token (and absent without one), requests counted by operation type and HTTP status,
errors by code, durations by operation name and code, and store calls by the spec's access
pattern with their capacity units."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from keygraph.serve import Served
from keygraph.serve.patterns import Patterns
from keygraph.store import Store
from keygraph.tokens import TokenKey
from tests.keygraph.api.conftest import (
    CASES,
    CODEC,
    SECRET,
    Compiled,
    bearer,
    post,
    served_client,
)
from tests.keygraph.api.metrics_samples import Samples
from tests.keygraph.api.metrics_samples import scrape as scrape_with
from tests.keygraph.api.serving import unreported

TOKEN = "serve-metrics-token-" + "t" * 16

pytestmark = pytest.mark.parametrize("kind", ["embedded"])


async def scrape(client: httpx.AsyncClient) -> Samples:
    """Every sample /metrics answers to TOKEN: (name, labels) to value."""
    return await scrape_with(client, TOKEN)


def grown(before: Samples, after: Samples, name: str, **labels: str) -> float:
    """How much the sample of `name` with exactly `labels` grew."""
    key = (name, frozenset(labels.items()))
    return after.get(key, 0.0) - before.get(key, 0.0)


@pytest.fixture
async def client(shop: tuple[Compiled, Store]) -> AsyncIterator[httpx.AsyncClient]:
    package, store = shop
    patterns = Patterns.load(CASES / "webshop" / "spec.toml")
    served = Served(
        package.schema,
        store,
        TokenKey(SECRET),
        CODEC,
        metered=True,
        metrics_token=TOKEN,
        pattern_of=patterns.of_call,
    )
    async with served_client(served) as c:
        yield c


async def test_metrics_answer_only_the_bearers_of_their_token(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.get("/metrics")).status_code == 401
    wrong = await client.get("/metrics", headers={"authorization": "Bearer " + "x" * 36})
    assert wrong.status_code == 401
    assert wrong.headers["www-authenticate"] == "Bearer"
    assert ("keygraph_requests_in_flight", frozenset()) in await scrape(client)


async def test_requests_errors_and_store_calls_are_counted(client: httpx.AsyncClient) -> None:
    before = await scrape(client)
    named = 'query Tea { product(sku: "TEA") { title } }'
    assert (await post(client, {"query": named}, **bearer())).status_code == 200
    assert (await post(client, {"query": "{ nothing }"}, **bearer())).status_code == 400
    assert (await post(client, {"query": named})).status_code == 401
    after = await scrape(client)
    assert grown(before, after, "keygraph_requests_total", type="query", status="200") == 1
    assert grown(before, after, "keygraph_requests_total", type="", status="400") == 1
    assert grown(before, after, "keygraph_requests_total", type="", status="401") == 1
    assert grown(before, after, "keygraph_errors_total", code="GRAPHQL_VALIDATION_FAILED") == 1
    assert grown(before, after, "keygraph_errors_total", code="UNAUTHENTICATED") == 1
    duration = "keygraph_request_duration_seconds_count"
    assert grown(before, after, duration, operation="Tea", code="OK") == 1
    assert grown(before, after, duration, operation="", code="UNAUTHENTICATED") == 1
    calls = "keygraph_store_call_duration_seconds_count"
    assert grown(before, after, calls, call="GetItem", pattern="product") == 1
    assert grown(before, after, "keygraph_capacity_units_total", unit="read", pattern="product")
    assert after[("keygraph_requests_in_flight", frozenset())] == 0


async def test_without_a_token_there_is_no_metrics_route(
    shop: tuple[Compiled, Store],
) -> None:
    package, store = shop
    served = Served(package.schema, store, TokenKey(SECRET), CODEC)
    async with served_client(served) as client:
        assert (await client.get("/metrics")).status_code == 404
        answered = await post(client, {"query": '{ product(sku: "TEA") { title } }'}, **bearer())
        assert unreported(answered.json()) == {"data": {"product": {"title": "Tea"}}}

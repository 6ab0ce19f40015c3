"""Traces of the compiled API as `serve` builds it from the settings, on DynamoDB Local: the
units DynamoDB reports for each store call are on its span, named by its access pattern,
and they add up to the request's span and its answer's `cost.actual.readUnits`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from generated.table import TABLE
from keygraph.serve import create_app
from server.auth.tokens import issue_token
from server.compiled import compiled
from server.settings import Settings
from tests.conftest import StoreFactory
from tests.server.conftest import SECRET

Q3 = (
    "query Q3 { users(first: 5) { edges { node { id name"
    " orders(first: 5) { edges { node { id status items { sku } } } }"
    " groups { edges { node { id name } } } } } } }"
)
CREATE_USER = 'mutation($e: String!) { createUser(input: {email: $e, name: "A"}) { id } }'
CREATE_ORDER = """mutation($u: ID!) { createOrder(input: {userId: $u, currency: "EUR",
  items: [{sku: "s", name: "n", quantity: 1, unitPriceCents: 5}]}) { id } }"""
CREATE_GROUP = 'mutation { createGroup(input: {name: "g"}) { id } }'
ADD_MEMBER = "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }"


async def post(
    client: httpx.AsyncClient, token: str, query: str, variables: dict[str, Any] | None = None
) -> dict[str, Any]:
    response = await client.post(
        "/graphql",
        json={"query": query, "variables": variables or {}},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert "errors" not in body, body
    return body


async def seed(client: httpx.AsyncClient, token: str) -> None:
    """A group of three users, each with an order."""
    group = (await post(client, token, CREATE_GROUP))["data"]["createGroup"]["id"]
    for n in range(3):
        created = await post(client, token, CREATE_USER, {"e": f"u{n}@example.com"})
        user = created["data"]["createUser"]["id"]
        await post(client, token, CREATE_ORDER, {"u": user})
        await post(client, token, ADD_MEMBER, {"g": group, "u": user})


@pytest.mark.dynamodb_local
async def test_store_spans_carry_dynamodb_consumed_units(
    tmp_path: Path, store_factory: StoreFactory
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = Settings(
        env="dev", data_dir=tmp_path, jwt_secret=SECRET, tracing=True, trace_exporter="console"
    ).resolved()
    token = issue_token(settings, "acme", "alice", roles=["admin"])
    store = await store_factory("dynamodb-local", TABLE)
    # traced as the settings say, its spans kept in memory rather than printed
    app = create_app(replace(compiled(settings, store), tracer_provider=provider))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://keygraph.test") as client:
        await seed(client, token)
        exporter.clear()
        body = await post(client, token, Q3)
    spans = list(exporter.get_finished_spans())
    (request,) = [s for s in spans if s.name == "Q3"]
    calls = [s for s in spans if s.kind is trace.SpanKind.CLIENT]
    assert len(calls) == body["extensions"]["storeCalls"]
    assert "Query list_users" in [c.name for c in calls]  # named by the spec's patterns
    units = [float((c.attributes or {})["keygraph.read_units"]) for c in calls]  # type: ignore[arg-type]
    assert all(u > 0 for u in units)  # as DynamoDB reported them (ReturnConsumedCapacity)
    assert sum(units) == body["extensions"]["cost"]["actual"]["readUnits"]
    assert (request.attributes or {})["keygraph.read_units"] == sum(units)

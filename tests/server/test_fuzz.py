"""The whole schema fuzzed with hypothesis-graphql against the app on both stores: valid
operations (queries and mutations, with arbitrary arguments) and invalid ones. No answer is
a 5xx or an INTERNAL error, none carries a traceback or a source path, and the other tenant's
data is the same afterwards."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from datetime import UTC
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_graphql import Mode, from_schema, nodes

from generated.table import TABLE
from server.edge.app import create_app
from server.edge.auth import issue_token
from server.graphql.schema import sdl
from server.seed.tenant import SeedSizes, seed
from server.settings import Settings
from tests.conftest import StoreFactory
from tests.server.conftest import SECRET

SIZES = SeedSizes(users=6, orders=12, groups=2, org_nodes=7, org_depth=3, shops=12, max_members=4)
EXAMPLES = {"embedded": 600, "dynamodb-local": 200}
HUNT = int(os.environ.get("KEYGRAPH_FUZZ_EXAMPLES", "0"))
"""Set, a longer hunt: that many fresh random operations per store instead of the fixed set."""
LEAKS = re.compile(r'Traceback|File "|\.py\b|/work/|site-packages')

IDS = """{
  users(first: 10) { edges { node { id email
    orders(first: 5) { edges { node { id } } } groups { edges { node { id } } } } } }
  orgRoots(first: 10) { id descendants(first: 20) { edges { node { id } } } }
  shopsNear(lat: 52.52, lng: 13.405, radiusKm: 50, first: 10) { shop { id } }
}"""
"""The ids (and emails) of a tenant's objects, for the fuzzer to use."""


def operations(ids: list[str], emails: list[str]) -> st.SearchStrategy[str]:
    """Valid and invalid operations whose ids and strings are often real ones (both
    tenants'), else arbitrary."""
    scalars = {
        "DateTime": st.one_of(
            st.datetimes(timezones=st.just(UTC)).map(lambda d: nodes.String(d.isoformat())),
            st.text(max_size=30).map(nodes.String),
        ),
        "ID": st.one_of(st.sampled_from(ids), st.text(max_size=40)).map(nodes.String),
        "String": st.one_of(st.sampled_from(emails), st.text(max_size=40)).map(nodes.String),
    }
    return st.one_of(
        from_schema(sdl(), custom_scalars=scalars),
        from_schema(sdl(), custom_scalars=scalars, mode=Mode.NEGATIVE),
    )


SNAPSHOT = (
    """{ users(first: 10) { edges { node { id email name createdAt version
      orders(first: 20) { edges { node { id status totalCents currency createdAt version
        items { sku name quantity unitPriceCents } } } } } } } }""",
    """{ users(first: 10) { edges { node { id
      groups(first: 10) { edges { node { id name members(first: 10) { edges { node { id } } } }
    } } } } } }""",
    """{ orgRoots(first: 10) { id name descendants(first: 20) { edges { node { id depth } } } }
      shopsNear(lat: 52.52, lng: 13.405, radiusKm: 50, first: 20) { distanceKm shop { id } } }""",
)
"""Everything the seed gives a tenant, in queries within the cost limit."""


class Target:
    """The app over one store, seeded for two tenants."""

    def __init__(self, client: httpx.AsyncClient, settings: Settings) -> None:
        self.client = client
        self.acme = {"Authorization": f"Bearer {issue_token(settings, 'acme', roles=['admin'])}"}
        self.globex = {
            "Authorization": f"Bearer {issue_token(settings, 'globex', roles=['admin'])}"
        }

    async def snapshot(self) -> list[Any]:
        found = []
        for query in SNAPSHOT:
            response = await self.client.post(
                "/graphql", json={"query": query}, headers=self.globex
            )
            body = response.json()
            assert "errors" not in body, body["errors"]
            found.append(body["data"])
        return found

    async def ids(self) -> tuple[list[str], list[str]]:
        """Every id and email the IDS query finds, in both tenants."""
        ids: list[str] = []
        emails: list[str] = []
        for headers in (self.acme, self.globex):
            response = await self.client.post("/graphql", json={"query": IDS}, headers=headers)
            _collect(response.json()["data"], ids, emails)
        return sorted(set(ids)), sorted(set(emails))


def _collect(value: Any, ids: list[str], emails: list[str]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "id":
                ids.append(inner)
            elif key == "email":
                emails.append(inner)
            else:
                _collect(inner, ids, emails)
    elif isinstance(value, list):
        for inner in value:
            _collect(inner, ids, emails)


@pytest.fixture(
    params=["embedded", pytest.param("dynamodb-local", marks=pytest.mark.dynamodb_local)]
)
async def target(
    request: pytest.FixtureRequest, store_factory: StoreFactory, tmp_path: Path
) -> AsyncIterator[tuple[Target, str]]:
    store = await store_factory(request.param, TABLE)
    for tenant in ("acme", "globex"):
        await seed(store, tenant, SIZES, progress=False)
    settings = Settings(data_dir=tmp_path, jwt_secret=SECRET).resolved()
    transport = httpx.ASGITransport(app=create_app(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield Target(client, settings), request.param


def generate(strategy: st.SearchStrategy[str], count: int) -> list[str]:
    """`count` operations drawn from `strategy`, the same ones on every run."""
    found: list[str] = []

    @settings(
        max_examples=count,
        deadline=None,
        derandomize=not HUNT,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(operation=strategy)
    def collect(operation: str) -> None:
        found.append(operation)

    collect()
    return found


async def test_fuzzed_operations_fail_cleanly_and_stay_in_their_tenant(
    target: tuple[Target, str],
) -> None:
    app, kind = target
    before = await app.snapshot()
    seen: dict[str, int] = {}
    ids, emails = await app.ids()
    for operation in generate(operations(ids, emails), HUNT or EXAMPLES[kind]):
        response = await app.client.post("/graphql", json={"query": operation}, headers=app.acme)
        assert response.status_code < 500, (operation, response.text)
        assert not LEAKS.search(response.text), (operation, response.text)
        body = response.json()
        codes = [error["extensions"]["code"] for error in body.get("errors", [])]
        assert "INTERNAL" not in codes, (operation, body)
        for code in codes:
            seen[code] = seen.get(code, 0) + 1
    assert await app.snapshot() == before
    assert seen.get("GRAPHQL_VALIDATION_FAILED", 0) > 0  # the invalid ones were refused

"""Fixtures for end-to-end GraphQL tests: the ASGI app on a fresh embedded store, tokens for
two tenants ("acme" and "globex"), and `gql(client, query, variables, token)` which posts a
request and returns the response body (asserting HTTP 200)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from generated.table import TABLE
from server.app import create_app
from server.auth import issue_token
from server.settings import Settings
from server.store.embedded import EmbeddedStore

SECRET = "test-secret-" + "x" * 40

Gql = Callable[..., Awaitable[dict[str, Any]]]


async def gql(
    client: httpx.AsyncClient,
    query: str,
    variables: dict[str, Any] | None = None,
    token: str | None = None,
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await client.post(
        "/graphql", json={"query": query, "variables": variables or {}}, headers=headers
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, jwt_secret=SECRET).resolved()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    embedded = EmbeddedStore(tmp_path / "keygraph.sqlite3", TABLE)
    yield embedded
    await embedded.close()


@pytest.fixture
async def client(settings: Settings, store: EmbeddedStore) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://keygraph.test") as c:
        yield c


@pytest.fixture
def acme_token(settings: Settings) -> str:
    return issue_token(settings, "acme", "alice")


@pytest.fixture
def globex_token(settings: Settings) -> str:
    return issue_token(settings, "globex", "gus")


@pytest.fixture(name="gql")
def gql_fixture() -> Gql:
    return gql

"""Fixtures for end-to-end GraphQL tests: the ASGI app on a fresh embedded store, tokens for
two tenants ("acme" and "globex"), and `gql(client, query, variables, token)` which posts a
request and returns the response body (asserting HTTP 200); and `world`, the app on each
store kind in turn as two tenants, with the store underneath to look for leftovers.

The app is the one `python -m server serve` runs: the API access_patterns.toml compiles to
with `server/extension/`, built from the settings by server/compiled.py."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from generated.table import TABLE
from keygraph.plan import Query, SortCondition, TableDef
from keygraph.serve import create_app
from keygraph.store import Store
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.compiled import compiled
from server.domain import cleanup
from server.settings import Settings

SECRET = "test-secret-" + "x" * 40


def app_of(settings: Settings, store: Store) -> Any:
    """The app `python -m server serve` runs on `store`, as the settings ask."""
    return create_app(compiled(settings, store))


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


class _Lines(logging.Handler):
    """A handler keeping the records it is given."""

    def __init__(self, lines: list[logging.LogRecord]) -> None:
        super().__init__()
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record)


@contextlib.contextmanager
def request_lines() -> Iterator[list[logging.LogRecord]]:
    """The request log's lines written meanwhile: both servers write one per request over
    HTTP, with its store calls (keygraph/serve/request_log.py)."""
    lines: list[logging.LogRecord] = []
    handler = _Lines(lines)
    logger = logging.getLogger("keygraph.request")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def store_counts(body: dict[str, Any]) -> dict[str, int]:
    """The dev-mode store call and wave counts of a response."""
    extensions = body["extensions"]
    return {"storeCalls": extensions["storeCalls"], "storeWaves": extensions["storeWaves"]}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Dev mode, asked for (a configured secret alone means production): answers report
    their store calls and GraphiQL comes with a token."""
    return Settings(env="dev", data_dir=tmp_path, jwt_secret=SECRET).resolved()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    embedded = EmbeddedStore(TABLE, path=tmp_path / "keygraph.sqlite3")
    yield embedded
    await embedded.close()


@pytest.fixture
async def client(settings: Settings, store: EmbeddedStore) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app_of(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://keygraph.test") as c:
        yield c


@pytest.fixture
def acme_token(settings: Settings) -> str:
    """An admin of acme: it may read and write the whole tenant."""
    return issue_token(settings, "acme", "alice", roles=["admin"])


@pytest.fixture
def globex_token(settings: Settings) -> str:
    """An admin of globex."""
    return issue_token(settings, "globex", "gus", roles=["admin"])


@pytest.fixture(name="gql")
def gql_fixture() -> Gql:
    return gql


USER_FIELDS = "id email name createdAt version"
ORDER_FIELDS = (
    "id status totalCents currency createdAt version "
    "items { sku name quantity unitPriceCents } user { id }"
)


class Api:
    """A client of the API as one tenant: raw bodies, data, error codes and shortcuts."""

    def __init__(self, client: httpx.AsyncClient, token: str) -> None:
        self.client = client
        self.token = token

    async def __call__(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        return await gql(self.client, query, variables, self.token)

    async def refused(
        self, query: str, variables: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """The errors of a request refused before anything ran: no data (null in a 200 to a
        client of application/json, or none in a 400), and no store call in its line of the
        request log."""
        headers = {"Authorization": f"Bearer {self.token}"}
        payload = {"query": query, "variables": variables or {}}
        with request_lines() as lines:
            response = await self.client.post("/graphql", json=payload, headers=headers)
        assert response.status_code in (200, 400), response.text
        body = response.json()
        assert body.get("data") is None, body
        [line] = lines
        assert line.store_calls == 0, body  # type: ignore[attr-defined]
        errors: list[dict[str, Any]] = body["errors"]
        return errors

    async def data(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        body = await self(query, variables)
        assert "errors" not in body, body["errors"]
        result: dict[str, Any] = body["data"]
        return result

    async def codes(self, query: str, variables: dict[str, Any] | None = None) -> list[str]:
        body = await self(query, variables)
        assert body.get("errors"), body
        return [error["extensions"]["code"] for error in body["errors"]]

    async def create_user(self, email: str, name: str = "Someone") -> dict[str, Any]:
        data = await self.data(
            f"mutation($i: CreateUserInput!) {{ createUser(input: $i) {{ {USER_FIELDS} }} }}",
            {"i": {"email": email, "name": name}},
        )
        user: dict[str, Any] = data["createUser"]
        return user

    async def create_order(
        self, user_id: str, lines: list[tuple[str, int, int]], currency: str = "EUR"
    ) -> dict[str, Any]:
        items = [
            {"sku": sku, "name": f"{sku} item", "quantity": qty, "unitPriceCents": price}
            for sku, qty, price in lines
        ]
        data = await self.data(
            f"mutation($i: CreateOrderInput!) {{ createOrder(input: $i) {{ {ORDER_FIELDS} }} }}",
            {"i": {"userId": user_id, "currency": currency, "items": items}},
        )
        order: dict[str, Any] = data["createOrder"]
        return order

    async def create_group(self, name: str) -> dict[str, Any]:
        data = await self.data(
            "mutation($n: String!) { createGroup(input: {name: $n}) { id name createdAt } }",
            {"n": name},
        )
        group: dict[str, Any] = data["createGroup"]
        return group

    async def add_member(self, group_id: str, user_id: str) -> dict[str, Any]:
        data = await self.data(
            "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }",
            {"g": group_id, "u": user_id},
        )
        group: dict[str, Any] = data["addGroupMember"]
        return group


@pytest.fixture
def acme(client: httpx.AsyncClient, acme_token: str) -> Api:
    return Api(client, acme_token)


@pytest.fixture
def globex(client: httpx.AsyncClient, globex_token: str) -> Api:
    return Api(client, globex_token)


@pytest.fixture
async def store_and_api(
    kind: str,
    store_factory: Callable[[str, TableDef], Awaitable[Store]],
    settings: Settings,
) -> AsyncIterator[tuple[Store, Api]]:
    """A store of `kind` over this repository's table, and an admin of acme's client of the
    app on it."""
    store = await store_factory(kind, TABLE)
    transport = httpx.ASGITransport(app=app_of(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield store, Api(client, issue_token(settings, "acme", roles=["admin"]))


async def refusal(api: Api, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    """The one error of a request that must fail."""
    body = await api(query, variables)
    assert body["data"] is None or not any(body["data"].values()), body
    [error] = body["errors"]
    result: dict[str, Any] = error
    return result


@dataclass
class World:
    acme: Api
    globex: Api
    store: Store
    client: httpx.AsyncClient

    async def partition(self, pk: str, sk_prefix: str | None = None) -> list[dict[str, Any]]:
        """Every item of a partition, read strongly consistent."""
        sort = None if sk_prefix is None else SortCondition("begins_with", sk_prefix)
        result = await self.store.query(Query(pk, sort=sort, consistent=True, limit=1000))
        return result.items


@pytest.fixture
async def world(
    kind: str,
    store_factory: Callable[[str, TableDef], Awaitable[Store]],
    settings: Settings,
) -> AsyncIterator[World]:
    """The app on a store of `kind` (the tests of deletes, moves, addresses and idempotent
    mutations), as an admin of each tenant, with the store underneath."""
    store = await store_factory(kind, TABLE)
    transport = httpx.ASGITransport(app=app_of(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield World(
            Api(client, issue_token(settings, "acme", "alice", roles=["admin"])),
            Api(client, issue_token(settings, "globex", "gus", roles=["admin"])),
            store,
            client,
        )
    await cleanup.stop()

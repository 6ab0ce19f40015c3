"""Request limits of the compiled API `serve` runs: body size (by header and as it streams),
and the per-request timeout that cancels the work."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from generated.table import TABLE
from keygraph.cursor import CursorCodec
from keygraph.plan import BatchGet, Get, Item, QueryResult, TableDef, WriteAction
from keygraph.plan import Query as QueryPlan
from keygraph.serve import create_app
from keygraph.store import Session
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.compiled import compiled
from server.domain.groups import create_group
from server.settings import Limits, Settings
from tests.ids import to_global_id
from tests.server.conftest import SECRET

VIEWER = {"query": "{ viewer { tenant } }"}


class SlowStore(EmbeddedStore):
    """An embedded store whose calls named in `slow` (reads and transactions) wait until
    `release` is set, as a remote store's do (it does not answer inline); it notes which
    waits were cancelled."""

    answers_inline = False

    def __init__(self, table: TableDef, *, path: Path) -> None:
        super().__init__(table, path=path)
        self.slow = {"get", "batch_get", "query", "transact_write"}
        self.release = asyncio.Event()
        self.waiting = 0
        self.cancelled = 0
        self.arrived = asyncio.Event()

    async def until_waiting(self, count: int) -> None:
        while self.waiting < count:
            self.arrived.clear()
            await self.arrived.wait()

    async def _wait(self, call: str) -> None:
        if call not in self.slow:
            return
        self.waiting += 1
        self.arrived.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.waiting -= 1

    async def get(self, plan: Get) -> Item | None:
        await self._wait("get")
        return await super().get(plan)

    async def batch_get(self, plan: BatchGet) -> list[Item]:
        await self._wait("batch_get")
        return await super().batch_get(plan)

    async def query(self, plan: QueryPlan) -> QueryResult:
        await self._wait("query")
        return await super().query(plan)

    async def transact_write(
        self, actions: Sequence[WriteAction], token: str | None = None
    ) -> None:
        await self._wait("transact_write")
        await super().transact_write(actions, token)


def _client(settings: Settings, store: EmbeddedStore) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=create_app(compiled(settings, store)))
    return httpx.AsyncClient(transport=transport, base_url="http://t")


@pytest.fixture
async def slow_store(tmp_path: Path) -> AsyncIterator[SlowStore]:
    store = SlowStore(TABLE, path=tmp_path / "slow.sqlite3")
    yield store
    await store.close()


def _settings(tmp_path: Path, **limits: Any) -> Settings:
    return Settings(data_dir=tmp_path, jwt_secret=SECRET, limits=Limits(**limits)).resolved()


def _auth(settings: Settings, tenant: str = "acme") -> dict[str, str]:
    return {"Authorization": f"Bearer {issue_token(settings, tenant, roles=['admin'])}"}


@pytest.fixture
async def small(tmp_path: Path, store: EmbeddedStore) -> AsyncIterator[tuple[Settings, Any]]:
    settings = _settings(tmp_path, max_body_bytes=1000)
    async with _client(settings, store) as client:
        yield settings, client


async def test_a_declared_body_over_the_limit_is_413_unread(
    small: tuple[Settings, httpx.AsyncClient],
) -> None:
    settings, client = small
    pulled = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal pulled
        for _ in range(100):
            pulled += 1
            yield b"x" * 100

    response = await client.post(
        "/graphql",
        content=body(),
        headers={**_auth(settings), "Content-Length": "10000", "Content-Type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["errors"][0]["extensions"]["code"] == "REQUEST_TOO_LARGE"
    assert pulled == 0


async def test_a_streamed_body_is_cut_off_at_the_limit(
    small: tuple[Settings, httpx.AsyncClient],
) -> None:
    settings, client = small
    pulled = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal pulled
        for _ in range(1000):
            pulled += 1
            yield b" " * 100

    response = await client.post(
        "/graphql", content=body(), headers={**_auth(settings), "Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["errors"][0]["extensions"]["code"] == "REQUEST_TOO_LARGE"
    assert pulled <= 12  # 1000 bytes is read in 100-byte chunks, then nothing more


async def test_a_request_past_its_timeout_is_cancelled(
    tmp_path: Path, slow_store: SlowStore, caplog: pytest.LogCaptureFixture
) -> None:
    settings = _settings(tmp_path, request_timeout=0.2)
    # a user through its own read, and the users of a page through a batch loader
    query = {"query": '{ user(id: "VXNlcjox") { id } users { edges { node { id } } } }'}
    async with _client(settings, slow_store) as client:
        with caplog.at_level(logging.WARNING, logger="keygraph.request"):
            response = await client.post("/graphql", json=query, headers=_auth(settings))
        assert response.status_code == 504
        body = response.json()
        assert body["errors"][0]["extensions"]["code"] == "TIMEOUT"
        await asyncio.sleep(0)
        assert slow_store.waiting == 0
        assert slow_store.cancelled >= 2
    assert [getattr(r, "code", None) for r in caplog.records] == ["TIMEOUT"]
    assert not any(r.exc_info for r in caplog.records)


async def test_a_timeout_cancels_the_batches_loaders_run(
    tmp_path: Path, slow_store: SlowStore
) -> None:
    settings = _settings(tmp_path, request_timeout=0.2)
    session = Session(slow_store, CursorCodec(settings.cursor_key()))
    slow_store.slow = set()
    group = await create_group(session, "acme", "g")
    slow_store.slow = {"query"}  # the members, read in a task of their own
    query = {
        "query": "query($id: ID!) { group(id: $id) { members { edges { node { id } } } } }",
        "variables": {"id": to_global_id("Group", group.group_id)},
    }
    async with _client(settings, slow_store) as client:
        response = await client.post("/graphql", json=query, headers=_auth(settings))
        assert response.status_code == 504
        await asyncio.sleep(0)
        assert (slow_store.waiting, slow_store.cancelled) == (0, 1)


async def test_a_cancelled_mutation_writes_nothing(tmp_path: Path, slow_store: SlowStore) -> None:
    settings = _settings(tmp_path, request_timeout=0.2)
    create = {"query": 'mutation { createUser(input: {email: "a@example.com", name: "A"}) { id } }'}
    async with _client(settings, slow_store) as client:
        response = await client.post("/graphql", json=create, headers=_auth(settings))
        assert response.status_code == 504
        slow_store.release.set()
        by_email = {"query": '{ userByEmail(email: "a@example.com") { id } }'}
        found = await client.post("/graphql", json=by_email, headers=_auth(settings))
        assert found.json()["data"] == {"userByEmail": None}
        again = await client.post("/graphql", json=create, headers=_auth(settings))
        assert "errors" not in again.json()

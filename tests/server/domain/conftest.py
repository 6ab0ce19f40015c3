"""Fixtures for the tests of deletes, moves, addresses and idempotent mutations: the app on
each store kind in turn, as two tenants, with the store underneath to look for leftovers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from generated.table import TABLE
from keygraph.plan import Query, SortCondition, TableDef
from keygraph.store import Store
from server.auth.tokens import issue_token
from server.domain import cleanup
from server.edge.app import create_app
from server.settings import Settings
from tests.server.conftest import Api


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
    store = await store_factory(kind, TABLE)
    transport = httpx.ASGITransport(app=create_app(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield World(
            Api(client, issue_token(settings, "acme", "alice", roles=["admin"])),
            Api(client, issue_token(settings, "globex", "gus", roles=["admin"])),
            store,
            client,
        )
    await cleanup.stop()

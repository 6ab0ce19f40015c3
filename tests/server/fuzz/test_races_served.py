"""Racing mutations (tests/server/fuzz/races.py) against a real server: `python -m server
serve --workers 2` on the embedded store, on loopback, so the races run across processes.
The invariants are read from the server's SQLite file. CI plays ROUNDS rounds of each
scenario; KEYGRAPH_FUZZ_EXAMPLES=N plays N / HUNT_SHARE (races.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from generated.table import TABLE
from keygraph.plan import Item
from keygraph.stores.embedded.store import EmbeddedStore
from tests.server.fuzz.checks import Failures
from tests.server.fuzz.races import SCENARIOS, plans, play
from tests.server.fuzz.target import scan
from tests.server.serving.test_serve import Server

ROUNDS = 5


class Served:
    """A served app as a racer: requests over loopback HTTP, items from its SQLite file."""

    def __init__(self, server: Server, client: httpx.AsyncClient, store: EmbeddedStore) -> None:
        self.client = client
        self.store = store
        self.headers = {"Authorization": f"Bearer {server.token}"}

    async def post(self, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
        return await self.client.post("/graphql", json=body, headers=self.headers)

    async def items(self) -> list[Item]:
        return await scan(self.store)


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    server = Server(tmp_path / "data", "--workers", "2")
    try:
        server.wait_healthy()
        store = EmbeddedStore(TABLE, path=tmp_path / "data" / "keygraph.sqlite3")
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            yield Served(server, client, store)
        await store.close()
    finally:
        server.stop()


async def test_racing_mutations_across_two_workers(served: Served) -> None:
    failures = Failures()
    for name in sorted(SCENARIOS):
        scenario = SCENARIOS[name](served, failures)

        async def no_pause(_number: int) -> None:
            return None

        await play(scenario, plans(scenario.kinds, ROUNDS), no_pause)
    assert not failures, "\n" + failures.report()

"""The hand-written server's racing mutations (tests/server/fuzz/races.py) against `make
serve`'s API: two `keygraph serve --package generated --extend server.extension` processes
on one SQLite file, as two workers, each round's mutations sent to both at once. The
invariants (an org parent's and the roots' child caps, a group's members kept on both
sides, an order and its copy) are read from the file after each round."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import httpx

from generated.table import TABLE
from keygraph.plan import Item
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.tokens import issue
from tests.keygraph.api.serving import keygraph_serve
from tests.server.fuzz.checks import Failures
from tests.server.fuzz.races import SCENARIOS, plans, play
from tests.server.fuzz.target import scan

ROUNDS = 5
SECRET = "repository-races-" + "r" * 32


class TwoWorkers:
    """A racer whose requests go to two servers in turn; items from their SQLite file."""

    def __init__(self, clients: list[httpx.AsyncClient], store: EmbeddedStore) -> None:
        self._next = itertools.cycle(clients)
        self.store = store
        self.headers = {
            "Authorization": f"Bearer {issue(SECRET, 'acme', 'racer', roles=['admin'])}"
        }

    async def post(self, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
        return await next(self._next).post("/graphql", json=body, headers=self.headers)

    async def items(self) -> list[Item]:
        return await scan(self.store)


async def test_racing_mutations_across_two_processes(tmp_path: Path) -> None:
    db = tmp_path / "keygraph.sqlite3"
    argv = ("--package", "generated", "--extend", "server.extension", "--db", db)
    env = {"KEYGRAPH_JWT_SECRET": SECRET}
    with (
        keygraph_serve(*argv, cwd=tmp_path, env=env) as one,
        keygraph_serve(*argv, cwd=tmp_path, env=env) as two,
    ):
        store = EmbeddedStore(TABLE, path=db)
        async with (
            httpx.AsyncClient(base_url=one, timeout=30) as first,
            httpx.AsyncClient(base_url=two, timeout=30) as second,
        ):
            failures = Failures()
            racer = TwoWorkers([first, second], store)
            for name in sorted(SCENARIOS):
                scenario = SCENARIOS[name](racer, failures)

                async def no_pause(_number: int) -> None:
                    return None

                await play(scenario, plans(scenario.kinds, ROUNDS), no_pause)
        await store.close()
    assert not failures, "\n" + failures.report()

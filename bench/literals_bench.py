"""What inlined literals cost against variables: `user(id) { id email name }` with the id
inlined (200 distinct ids, each text served by its shape's normalised document) against the
same document with a variable; and an APQ hit against a text with inlined literals that is
new each time (both over 1,000 ids, more texts than the document cache keeps), found by
its shape and, for comparison, on an app keeping no document (each text parsed and validated
as written). Every arm runs in one process on the compiled API, the requests in turns, on
each executor (compiled, graphql-core); a request's cost is the process CPU time around it (the
in-process client's own part is the same for every arm). Prints one JSON object and writes
bench/results/literals-embedded.json; bench/README.md records it.

`python -m bench literals [--rounds N]`
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.asgi import AsgiClient
from bench.by_executor import clients, command_line, cycling, interleave, ratios, run_by_executor
from bench.targets import Executor
from keygraph.serve.manifest import sha256
from keygraph.stores.embedded.store import EmbeddedStore
from server.seed.tenant import SeedSizes

TENANT = "bench"
SIZES = SeedSizes(users=1000, orders=10, groups=2, org_nodes=2, org_depth=1, shops=2)
DISTINCT = 200
"""Ids the literals-against-variables arms cycle through."""
RESULTS = Path(__file__).with_name("results") / "literals-embedded.json"
VARIABLES = "query($id: ID!) { user(id: $id) { id email name } }"
LITERAL = '{ user(id: "%s") { id email name } }'
USERS = "query($after: String) { users(first: 100, after: $after) { edges { node { id } } pageInfo { endCursor hasNextPage } } }"  # noqa: E501


async def _ids(client: AsgiClient) -> list[str]:
    ids: list[str] = []
    after = None
    while True:
        answer = await client.post("/graphql", json={"query": USERS, "variables": {"after": after}})
        page = answer.json()["data"]["users"]
        ids += [edge["node"]["id"] for edge in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            return ids
        after = page["pageInfo"]["endCursor"]


async def _executor(
    store: EmbeddedStore, data: Path, executor: Executor, rounds: int
) -> dict[str, Any]:
    client, as_written = clients(store, data, executor, TENANT)
    ids = await _ids(client)
    some = ids[:DISTINCT]
    extensions = {"persistedQuery": {"version": 1, "sha256Hash": sha256(VARIABLES)}}
    registering = {"query": VARIABLES, "variables": {"id": ids[0]}, "extensions": extensions}
    await client.post("/graphql", json=registering)
    literals = [{"query": LITERAL % user_id} for user_id in ids]
    result = await interleave(
        {
            "variables": cycling(
                client, [{"query": VARIABLES, "variables": {"id": i}} for i in some]
            ),
            "literals": cycling(client, literals[:DISTINCT]),
            "apq_hit": cycling(
                client, [{"variables": {"id": i}, "extensions": extensions} for i in ids]
            ),
            "new_literal_text": cycling(client, literals),
            "new_literal_text_as_written": cycling(as_written, literals),
        },
        rounds,
    )
    ratios(
        result,
        [
            ("literals", "variables"),
            ("apq_hit", "new_literal_text"),
            ("apq_hit", "new_literal_text_as_written"),
            ("new_literal_text_as_written", "variables"),
        ],
    )
    return {f"user(id), {executor}": result}


async def run(rounds: int) -> dict[str, Any]:
    return await run_by_executor(SIZES, TENANT, _executor, rounds)


def main(argv: Sequence[str]) -> None:
    command_line("literals", __doc__, run, RESULTS, argv)

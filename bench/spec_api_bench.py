"""A field the spec gives against its hand-written twin: server CPU per request of Q1, Q3
and M1 (createOrder) as this repository's server answers them (its hand-written schema) and
as `keygraph serve` answers the same documents through the API its spec gives (`user`,
`users` with the `orders` and `groups` relations) with this repository's extension (its
mutations), both compiled, in process, on one seeded embedded store; and the spec's API on
graphql-core's executor, to show what compiling gives it.

    python -m bench spec-api [--rounds N]
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bench import harness
from bench.asgi import AsgiClient
from bench.by_executor import Send, cycling, interleave, ratios
from bench.machine import machine_info
from generated import authz
from generated.api import API
from generated.table import TABLE
from keygraph.api import executable
from keygraph.cursor import CursorCodec
from keygraph.serve import Served
from keygraph.serve import create_app as serve_app
from keygraph.serve.package import extension_at
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.tokens import TokenKey, issue
from server.auth.tokens import issue_token
from server.edge.app import create_app
from server.graphql.ids import to_global_id
from server.seed.tenant import SeedSizes, seed
from server.settings import Limits, Settings

LIST = "{ users(first: 20) { edges { node { userId } } } }"
RESULTS = Path(__file__).parent / "results" / "spec_api.json"
SIZES = SeedSizes(users=200, orders=6, groups=4, org_nodes=4, org_depth=2, shops=4, max_members=50)
TENANT = "acme"
_LINES = "items { sku name quantity unitPriceCents }"
_FIELDS = f"status totalCents currency createdAt {_LINES}"
QUERIES = {
    "Q1": "query Q1($id: ID!) { user(id: $id) { id email name createdAt version } }",
    "Q3": "query Q3 { users(first: 50) { edges { node { id name"
    f" orders(first: 5) {{ edges {{ node {{ id {_FIELDS} }} }} }}"
    " groups { edges { node { id name } } } } } pageInfo { hasNextPage } } }",
    "M1": """mutation M1($id: ID!) { createOrder(input: {userId: $id, currency: "EUR",
      items: [{sku: "A-1", name: "Tea", quantity: 2, unitPriceCents: 150}]})
      { id status totalCents version } }""",
}
"""The same documents for both: the spec's API is named and shaped as schema.graphql."""


async def _run(rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        store = EmbeddedStore(TABLE, path=data / "bench.sqlite3")
        await seed(store, TENANT, SIZES, progress=False)
        limits = Limits(tenant_budget=10**12, tenant_refill=10**12)
        settings = Settings(
            data_dir=data, jwt_secret="b" * 40, env="production", limits=limits
        ).resolved()
        admin = issue_token(settings, TENANT, "bench", roles=["admin"])
        hand = AsgiClient(create_app(settings, store), {"Authorization": f"Bearer {admin}"})
        schema = executable(API, [extension_at("server.extension", "generated")], authz)
        served = Served(schema, store, TokenKey("s" * 40), CursorCodec(b"c" * 32), max_cost=10**6)
        token = {"Authorization": f"Bearer {issue('s' * 40, TENANT, 'bench', roles=['admin'])}"}
        spec = AsgiClient(serve_app(served), token)
        core = AsgiClient(serve_app(replace(served, compiled=False)), token)
        listed = await spec.post("/graphql", {"query": LIST})
        ids = [edge["node"]["userId"] for edge in listed.json()["data"]["users"]["edges"]]
        results: dict[str, Any] = {}
        for name, query in QUERIES.items():
            arms = {
                f"{name}_hand": cycling(hand, _bodies(query, ids)),
                f"{name}_spec": cycling(spec, _bodies(query, ids)),
                f"{name}_spec_core": cycling(core, _bodies(query, ids)),
            }
            measured = await interleave(arms, rounds, _cpu)
            pairs = [(f"{name}_spec", f"{name}_hand"), (f"{name}_spec_core", f"{name}_spec")]
            ratios(measured, pairs)
            results[name] = measured
        await store.close()
    return {"machine": machine_info(), "sizes": asdict(SIZES), "results": results}


def _bodies(query: str, ids: list[str]) -> list[dict[str, Any]]:
    """The requests an arm cycles through: one per user for an operation taking an id."""
    if "$id" not in query:
        return [{"query": query}]
    return [{"query": query, "variables": {"id": to_global_id("User", i)}} for i in ids]


async def _cpu(send: Send) -> float:
    """The process CPU time one request takes; it must answer without errors."""
    started = time.process_time()
    answer = await send()
    taken = time.process_time() - started
    if answer.status_code != 200 or b'"errors"' in answer.content:
        raise RuntimeError(answer.text[:500])
    return taken


def main(argv: Sequence[str]) -> None:
    parser = harness.parser("spec-api", __doc__)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args(argv)
    text = json.dumps(asyncio.run(_run(args.rounds)), indent=2)
    RESULTS.write_text(text + "\n")
    print(text)

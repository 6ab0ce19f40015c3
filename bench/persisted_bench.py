"""What an automatic persisted query's hit saves: Q1 sent by its sha256 against the same
request sent as text, over POST and over GET, the same app in one process, requests
alternating between the two, on each executor. A request's cost is the process CPU time it
takes (the in-process client's own part is the same few microseconds for both). Prints one
JSON object and writes bench/results/persisted-embedded.json; bench/README.md records it.

`python -m bench.persisted_bench [--rounds N]`
"""

from __future__ import annotations

import json
import statistics
import urllib.parse
from pathlib import Path
from typing import Any

from bench.asgi import AsgiClient
from bench.by_executor import Send, command_line, run_by_executor, user_cpu
from bench.queries import Q1
from keygraph.stores.embedded.store import EmbeddedStore
from server.edge.app import create_app
from server.edge.auth import issue_token
from server.persisted.manifest import sha256
from server.seed.tenant import SeedSizes
from server.settings import ExecutorKind, Limits, Settings

TENANT = "bench"
SIZES = SeedSizes(users=50, orders=100, groups=5, org_nodes=5, org_depth=2, shops=5)
RESULTS = Path(__file__).with_name("results") / "persisted-embedded.json"
FIRST_USER = "{ users(first: 1) { edges { node { id } } } }"


def _post(client: AsgiClient, body: dict[str, Any]) -> Send:
    return lambda: client.post("/graphql", json=body)


def _get(client: AsgiClient, params: dict[str, Any]) -> Send:
    encoded = urllib.parse.urlencode(
        {
            name: value if isinstance(value, str) else json.dumps(value)
            for name, value in params.items()
        }
    ).encode()
    return lambda: client.get("/graphql", encoded)


async def alternate(arms: dict[str, Send], rounds: int) -> dict[str, Any]:
    """Mean and median CPU time (µs) per request of each arm, one of each per round, in
    turns, and the ratios of the first arm's to the second's."""
    names = list(arms)
    taken: dict[str, list[float]] = {name: [] for name in names}
    for warm in range(20):
        await user_cpu(arms[names[warm % 2]])
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            taken[name].append(await user_cpu(arms[name]))
    result: dict[str, Any] = {"rounds": rounds}
    for name in names:
        result[f"{name}_mean_us"] = round(statistics.fmean(taken[name]) * 1e6, 1)
        result[f"{name}_p50_us"] = round(statistics.median(taken[name]) * 1e6, 1)
    first, second = (taken[name] for name in names)
    result["ratio_p50"] = round(statistics.median(first) / statistics.median(second), 3)
    result["ratio_mean"] = round(statistics.fmean(first) / statistics.fmean(second), 3)
    return result


async def _executor(
    store: EmbeddedStore, data: Path, executor: ExecutorKind, rounds: int
) -> dict[str, Any]:
    limits = Limits(tenant_budget=10**12, tenant_refill=10**12)
    settings = Settings(
        data_dir=data, jwt_secret="b" * 40, env="production", limits=limits, executor=executor
    ).resolved()
    app = create_app(settings, store)
    token = issue_token(settings, TENANT, "bench", roles=["admin"])
    client = AsgiClient(app, {"Authorization": f"Bearer {token}"})
    first = await client.post("/graphql", json={"query": FIRST_USER})
    user_id = first.json()["data"]["users"]["edges"][0]["node"]["id"]
    variables = {"id": user_id}
    extensions = {"persistedQuery": {"version": 1, "sha256Hash": sha256(Q1)}}
    registering = {"query": Q1, "variables": variables, "extensions": extensions}
    await client.post("/graphql", json=registering)
    by_hash = {"variables": variables, "extensions": extensions}
    as_text = {"query": Q1, "variables": variables}
    return {
        f"Q1 POST, {executor}": await alternate(
            {"apq_hit": _post(client, by_hash), "text": _post(client, as_text)}, rounds
        ),
        f"Q1 GET, {executor}": await alternate(
            {"apq_hit": _get(client, by_hash), "text": _get(client, as_text)}, rounds
        ),
    }


async def run(rounds: int) -> dict[str, Any]:
    return await run_by_executor(SIZES, TENANT, _executor, rounds)


def main() -> None:
    command_line(__doc__, run, RESULTS)


if __name__ == "__main__":
    main()

"""Server CPU per mutation of two checkouts side by side: each arm is a process running this
file's worker against its checkout's compiled API (server/compiled.py, in-process, embedded
store), and the arms take
turns, so the machine's noise falls on both. The worker times createOrder and updateUser
(a name change, then an email change that moves the claim) as process CPU per request.

    python -m bench mutations --base <git ref>   # the ref's checkout against this one
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import harness

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
OPERATIONS = ("createOrder", "updateUser name", "updateUser email")
CREATE_ORDER = """mutation($u: ID!) { createOrder(input: {userId: $u, currency: "EUR",
  items: [{sku: "A", name: "a", quantity: 2, unitPriceCents: 150}]}) { id totalCents } }"""
UPDATE_USER = """mutation($i: UpdateUserInput!) { updateUser(input: $i) { id version } }"""
CREATE_USER = """mutation { createUser(input: {email: "bench@example.org", name: "B"})
  { id version } }"""


async def _worker(requests: int) -> dict[str, list[float]]:
    """CPU seconds of each request of each operation, on a fresh store of this checkout."""
    from bench.asgi import AsgiClient
    from generated.table import TABLE
    from keygraph.serve import create_app
    from keygraph.stores.embedded.store import EmbeddedStore
    from server.auth.tokens import issue_token
    from server.compiled import compiled
    from server.settings import Limits, Settings

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        limits = Limits(tenant_budget=10**12, tenant_refill=10**12)
        settings = Settings(
            data_dir=data, jwt_secret="b" * 40, env="production", limits=limits
        ).resolved()
        store = EmbeddedStore(TABLE, path=data / "bench.sqlite")
        token = issue_token(settings, "acme", "bench", roles=["admin"])
        app = create_app(compiled(settings, store))
        client = AsgiClient(app, {"Authorization": f"Bearer {token}"})

        async def cpu(query: str, variables: dict[str, Any]) -> tuple[float, Any]:
            started = time.process_time()
            answer = await client.post("/graphql", json={"query": query, "variables": variables})
            taken = time.process_time() - started
            body = answer.json()
            if answer.status_code != 200 or "errors" in body:
                raise RuntimeError(answer.text)
            return taken, body["data"]

        _, made = await cpu(CREATE_USER, {})
        user, version = made["createUser"]["id"], made["createUser"]["version"]
        times: dict[str, list[float]] = {name: [] for name in OPERATIONS}
        for n in range(requests):
            taken, _ = await cpu(CREATE_ORDER, {"u": user})
            times["createOrder"].append(taken)
            for name, change in (
                ("updateUser name", {"name": f"B {n}"}),
                ("updateUser email", {"email": f"bench{n}@example.org"}),
            ):
                given = {"id": user, "expectedVersion": version, **change}
                taken, data = await cpu(UPDATE_USER, {"i": given})
                version = data["updateUser"]["version"]
                times[name].append(taken)
        await store.close()
        return times


def _run_arm(checkout: Path, requests: int) -> dict[str, list[float]]:
    """One worker process on `checkout`'s code (this file run by path, its imports from there)."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", str(requests)],
        cwd=checkout,
        env={"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    times: dict[str, list[float]] = json.loads(done.stdout.splitlines()[-1])
    return times


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = harness.parser("mutations", __doc__)
    parser.add_argument("--base", default="HEAD", help="the git ref of the other arm")
    parser.add_argument("--rounds", type=int, default=6, help="turns each arm takes")
    parser.add_argument("--requests", type=int, default=200, help="of each operation a turn")
    parser.add_argument("--worker", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(asyncio.run(_worker(args.worker))))
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(base), args.base], check=True)
        try:
            arms = {"base": base, "this": ROOT}
            medians: dict[str, dict[str, list[float]]] = {
                a: {o: [] for o in OPERATIONS} for a in arms
            }
            for _ in range(args.rounds):
                for arm, checkout in arms.items():
                    for name, times in _run_arm(checkout, args.requests).items():
                        medians[arm][name].append(statistics.median(times))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], check=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", args.base], capture_output=True, text=True, check=True
    )
    report = {
        "base": commit.stdout.strip(),
        "rounds": args.rounds,
        "requests": args.requests,
        "median_us": {
            arm: {op: round(statistics.median(runs) * 1e6, 1) for op, runs in ops.items()}
            for arm, ops in medians.items()
        },
    }
    report["ratio_this_to_base"] = {
        op: round(report["median_us"]["this"][op] / report["median_us"]["base"][op], 3)
        for op in OPERATIONS
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mutations.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    if "--worker" in sys.argv:
        sys.path.insert(0, str(Path.cwd()))
    main()

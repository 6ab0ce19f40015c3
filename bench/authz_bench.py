"""What authorization costs on Q1 and Q3: the same app (the compiled API) in one process, requests
alternating between the spec's guards (on) and guards that allow everything without evaluating a
rule (off), as an admin (who reads everything) and as a member (Q1: its own user; Q3 with emails for
orders: every user, each other user's email refused). Prints one JSON object and writes
bench/results/authz-embedded.json; bench/README.md records it.

`python -m bench authz [--rounds N]`
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict
from pathlib import Path
from types import CodeType
from typing import Any

from bench import harness
from bench.asgi import AsgiClient
from bench.machine import machine_info
from bench.queries import Q1, Q3, local_id
from bench.targets import compiled_app, production_settings
from generated import authz
from generated.table import TABLE
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.seed.tenant import SeedSizes, seed

TENANT = "bench"
SIZES = SeedSizes(users=200, orders=2000, groups=20, org_nodes=10, org_depth=2, shops=10)
RESULTS = Path(__file__).with_name("results") / "authz-embedded.json"
FIRST_USER = "{ users(first: 1) { edges { node { id } } } }"
Q3_EMAILS = (
    "query Q3e { users(first: 50) { edges { node { id name email"
    " groups { edges { node { id name } } } } } pageInfo { hasNextPage } } }"
)
"""Q3 with each user's email instead of its orders: on and off read the same items, and a
member is refused 49 of the 50 emails (Q3 itself as a member reads only its own orders, so
on would read less than off)."""


def _allow(*_args: Any, **_kwargs: Any) -> bool:
    return True


@contextmanager
def guards_off() -> Iterator[None]:
    """Every guard of generated/authz.py answers yes without evaluating its rule: each
    function runs `_allow`'s code, as the API holds the functions themselves."""
    guards = [guard for name, guard in vars(authz).items() if name.startswith("may_")]
    kept: list[tuple[Callable[..., bool], CodeType]] = [(g, g.__code__) for g in guards]
    for guard in guards:
        guard.__code__ = _allow.__code__
    try:
        yield
    finally:
        for guard, code in kept:
            guard.__code__ = code


async def _one(client: AsgiClient, body: dict[str, Any], off: bool) -> float:
    with guards_off() if off else nullcontext():
        started = time.perf_counter()
        answer = await client.post("/graphql", json=body)
        taken = time.perf_counter() - started
    assert answer.status_code == 200, answer.text
    assert b'"data":{"user' in answer.content, answer.text
    return taken


async def alternate(client: AsgiClient, body: dict[str, Any], rounds: int) -> dict[str, Any]:
    """Median and p90 latency (ms) on and off, a request of each per round, in turns."""
    taken: dict[bool, list[float]] = {False: [], True: []}
    for warm in range(20):
        await _one(client, body, warm % 2 == 0)
    for round_ in range(rounds):
        order = (False, True) if round_ % 2 == 0 else (True, False)
        for guards_skipped in order:
            taken[guards_skipped].append(await _one(client, body, guards_skipped))
    on, off = statistics.median(taken[False]), statistics.median(taken[True])
    return {
        "rounds": rounds,
        "on_p50_ms": round(on * 1000, 3),
        "off_p50_ms": round(off * 1000, 3),
        "on_p90_ms": round(statistics.quantiles(taken[False], n=10)[-1] * 1000, 3),
        "off_p90_ms": round(statistics.quantiles(taken[True], n=10)[-1] * 1000, 3),
        "overhead_pct": round((on / off - 1) * 100, 2),
    }


async def run(rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as data:
        store = EmbeddedStore(TABLE, path=Path(data) / "bench.sqlite3")
        await seed(store, TENANT, SIZES, progress=False)
        settings = production_settings(Path(data))
        app = compiled_app(settings, store)
        admin_token = issue_token(settings, TENANT, "bench", roles=["admin"])
        admin = AsgiClient(app, {"Authorization": f"Bearer {admin_token}"})
        first = await admin.post("/graphql", json={"query": FIRST_USER})
        user_id = first.json()["data"]["users"]["edges"][0]["node"]["id"]
        member_token = issue_token(settings, TENANT, local_id(user_id), roles=["member"])
        member = AsgiClient(app, {"Authorization": f"Bearer {member_token}"})
        q1 = {"query": Q1, "variables": {"id": user_id}}
        q3 = {"query": Q3, "variables": {}}
        q3_emails = {"query": Q3_EMAILS, "variables": {}}
        results = {
            "Q1 admin": await alternate(admin, q1, rounds),
            "Q1 member (own user)": await alternate(member, q1, rounds),
            "Q3 admin": await alternate(admin, q3, max(rounds // 10, 50)),
            "Q3 with emails, admin": await alternate(admin, q3_emails, max(rounds // 10, 50)),
            "Q3 with emails, member": await alternate(member, q3_emails, max(rounds // 10, 50)),
        }
        await store.close()
    return {"machine": machine_info(), "sizes": asdict(SIZES), "results": results}


def main(argv: Sequence[str]) -> None:
    parser = harness.parser("authz", __doc__)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args(argv)
    report = asyncio.run(run(args.rounds))
    text = json.dumps(report, indent=2)
    RESULTS.write_text(text + "\n")
    print(text)

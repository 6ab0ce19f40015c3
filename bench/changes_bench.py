"""What deletes, moves and Idempotency-Keys cost: a user's delete with what it owns, an org
subtree's move in one transaction and as a resumable task, and a mutation with and without an
Idempotency-Key (and its replay) on the compiled API, on one store. Prints one JSON object and
writes bench/results/changes-<store>.json; bench/README.md records it.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from bench import harness
from bench.machine import machine_info
from bench.migrate_bench import local_store
from bench.targets import compiled_app, production_settings
from generated.queries.org_node import get_org_node
from generated.table import TABLE
from keygraph.cursor import CursorCodec
from keygraph.store import Session, Store
from keygraph.stores import admin_of
from keygraph.stores.dynamodb.local import DynamoDBLocal
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.domain import addresses, cleanup, groups, orders, org, org_changes, users
from server.settings import Settings

TENANT = "bench"
LINE = [{"sku": "S", "name": "thing", "quantity": 1, "unit_price_cents": 100}]
ADDRESS = {
    "label": "Home",
    "line1": "Karl-Marx-Allee 1",
    "line2": None,
    "city": "Berlin",
    "postal_code": "10178",
    "country": "DE",
}
SIZES = {
    "embedded": {"users": 20, "big_orders": 1000, "big_tree": 1000, "requests": 200},
    "dynamodb-local": {"users": 10, "big_orders": 200, "big_tree": 200, "requests": 100},
}


async def timed(call: Awaitable[Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await call
    return (time.perf_counter() - started) * 1000, result


async def user_with(s: Session, n: int, orders_: int, groups_: list[str], addrs: int) -> str:
    user = await users.create_user(s, TENANT, f"u{n}@example.org", f"U{n}")
    for _ in range(orders_):
        await orders.create_order(s, TENANT, user.user_id, "EUR", LINE)
    for group_id in groups_:
        await groups.add_member(s, TENANT, group_id, user.user_id)
    for _ in range(addrs):
        await addresses.add_address(s, TENANT, user.user_id, ADDRESS, False)
    return user.user_id


async def deletes(s: Session, sizes: dict[str, int]) -> dict[str, Any]:
    group_ids = [(await groups.create_group(s, TENANT, f"G{n}")).group_id for n in range(5)]
    small = []
    for n in range(sizes["users"]):
        user_id = await user_with(s, n, 10, group_ids, 3)
        version = 1 + len(group_ids) + 3  # each membership and address raised it
        small.append((await timed(users.delete_user(s, TENANT, user_id, version)))[0])
    big = await user_with(s, 10_000, sizes["big_orders"], [], 0)
    ms, complete = await timed(users.delete_user(s, TENANT, big, 1))
    await cleanup.drain()
    items = 2 * sizes["big_orders"]
    return {
        "small_user": "10 orders, 5 memberships, 3 addresses (39 items)",
        "small_median_ms": round(statistics.median(small), 1),
        "big_user_orders": sizes["big_orders"],
        "big_items": items,
        "big_ms": round(ms),
        "big_complete_inline": complete,
        "big_items_per_second": round(items / (ms / 1000)),
    }


async def tree(s: Session, parent: org.Path, size: int) -> org.Path:
    """A subtree of `size` nodes below parent: a top node, its children, theirs (<= 100 each)."""
    top = (await org.create_org_node(s, TENANT, "top", parent)).path
    made, level = 1, [top]
    while made < size:
        below = []
        for node in level:
            for n in range(min(100, size - made)):
                below.append((await org.create_org_node(s, TENANT, f"n{made}.{n}", node)).path)
            made += min(100, size - made)
            if made >= size:
                break
        level = below
    return top


async def version_of(s: Session, path: org.Path) -> int:
    node = await get_org_node(s, TENANT, path, consistent=True)
    assert node is not None
    return node.version


async def moves(s: Session, sizes: dict[str, int]) -> dict[str, Any]:
    a = (await org.create_org_node(s, TENANT, "A", ())).path
    b = (await org.create_org_node(s, TENANT, "B", ())).path
    top = await tree(s, a, 40)
    small = []
    for n in range(10):
        to = b if n % 2 == 0 else a
        ms, (moved, _) = await timed(
            org_changes.move_org_node(s, TENANT, top, await version_of(s, top), to)
        )
        small.append(ms)
        top = moved.path
    big = await tree(s, a, sizes["big_tree"])
    cleanup.INLINE_SECONDS = 3600.0
    ms, (_, complete) = await timed(
        org_changes.move_org_node(s, TENANT, big, await version_of(s, big), b)
    )
    return {
        "small_nodes": 40,
        "small_median_ms": round(statistics.median(small), 1),
        "big_nodes": sizes["big_tree"],
        "big_ms": round(ms),
        "big_complete": complete,
        "big_nodes_per_second": round(sizes["big_tree"] / (ms / 1000)),
    }


async def idempotency(store: Store, settings: Settings, requests: int) -> dict[str, Any]:
    app = compiled_app(settings, store)
    token = issue_token(settings, TENANT, "bench", roles=["admin"])
    query = "mutation($i: CreateUserInput!) { createUser(input: $i) { id email } }"

    async def send(client: httpx.AsyncClient, n: int, key: str | None) -> float:
        headers = {"Authorization": f"Bearer {token}"}
        if key is not None:
            headers["Idempotency-Key"] = key
        body = {"query": query, "variables": {"i": {"email": f"i{n}@example.org", "name": "I"}}}
        started = time.perf_counter()
        response = await client.post("/graphql", json=body, headers=headers)
        assert response.status_code == 200, response.text
        return (time.perf_counter() - started) * 1000

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://b") as client:
        plain, keyed, replayed = [], [], []
        for n in range(requests):  # interleaved, so drift hits all three alike
            plain.append(await send(client, n, None))
            keyed.append(await send(client, requests + n, f"k{n}"))
            replayed.append(await send(client, requests + n, f"k{n}"))
    return {
        "requests": requests,
        "without_key_median_ms": round(statistics.median(plain), 2),
        "with_key_median_ms": round(statistics.median(keyed), 2),
        "replay_median_ms": round(statistics.median(replayed), 2),
        "with_key_over_without": round(statistics.median(keyed) / statistics.median(plain), 2),
    }


async def measure(kind: str, work: Path) -> dict[str, Any]:
    local: DynamoDBLocal | None = None
    if kind == "embedded":
        store: Store = EmbeddedStore(TABLE, path=work / "changes.sqlite3")
    else:
        local = DynamoDBLocal()
        local.start()
        store = local_store(TABLE, local)
        admin_of(store).create_table()
    sizes = SIZES[kind]
    settings = production_settings(work)
    session = Session(store, CursorCodec(b"b" * 32))
    run: list[tuple[str, Callable[[], Awaitable[dict[str, Any]]]]] = [
        ("delete_user", lambda: deletes(session, sizes)),
        ("move_org_node", lambda: moves(session, sizes)),
        ("idempotency", lambda: idempotency(store, settings, sizes["requests"])),
    ]
    try:
        return {"store": kind, **{name: await step() for name, step in run}}
    finally:
        await store.close()
        if local is not None:
            local.stop()


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser("changes", __doc__)
    parser.add_argument("--store", choices=tuple(SIZES), default="embedded")
    parser.add_argument("--out", type=Path, help="default bench/results/changes-<store>.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keygraph-changes-bench-") as tmp:
        result = asyncio.run(measure(args.store, Path(tmp)))
    text = json.dumps({**result, "machine": machine_info()}, indent=2) + "\n"
    out = args.out or Path(__file__).with_name("results") / f"changes-{args.store}.json"
    out.write_text(text)
    print(text, end="")

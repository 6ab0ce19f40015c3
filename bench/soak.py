"""The soak run: `python -m server serve` under mixed reads and writes at a fixed concurrency
for minutes, on the embedded store or DynamoDB Local.

Each minute it reports the answers, errors, p50/p99 latency and the server's memory (RSS and
its anonymous part apart: the embedded store's SQLite file is memory-mapped, so RSS grows
with the data read while anonymous memory is the process's own). Every write the server
acknowledged is remembered and read back at the end; one that does not read back as
acknowledged is lost. `python -m bench.soak --help` for the flags.

With `--faults` (DynamoDB Local only) the server reaches DynamoDB Local through a
fault-injecting proxy (keygraph.stores.dynamodb.faults) that throttles 5% of the data-plane
calls and resets the connection on 1% (half before DynamoDB runs the call, half after): the
answers' codes are counted (no INTERNAL is the goal), and the acknowledged writes are read
back with the faults off.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.loadgen import HOST, read_response
from bench.machine import machine_info
from bench.stats import percentile
from generated.table import TABLE
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.faults import (
    RESET_AFTER,
    RESET_BEFORE,
    THROTTLING,
    THROUGHPUT_EXCEEDED,
    FaultProxy,
)
from keygraph.stores.dynamodb.local import (
    LOCAL_KEY_ID,
    LOCAL_REGION,
    LOCAL_SECRET,
    DynamoDBLocal,
    free_port,
)
from keygraph.stores.dynamodb.store import make_client
from server.edge.auth import issue_token
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).with_name("results")
SECRET = "keygraph-soak-secret-not-for-production-use"
TENANT = "demo"
STATUSES = ("PENDING", "PAID", "SHIPPED", "DELIVERED", "CANCELLED")

READS = {
    "user": "query($id: ID!) { user(id: $id) { id email name version } }",
    "users": "{ users(first: 20) { edges { node { id name orders(first: 5) { edges { node { id"
    " status items { sku } } } } groups { edges { node { name } } } } } } }",
    "orders": "query($id: ID!) { user(id: $id) { orders(first: 20) { edges { node { id status"
    " totalCents } } } } }",
    "near": "{ shopsNear(lat: 52.52, lng: 13.405, radiusKm: 5, first: 20) { distanceKm"
    " shop { id name } } }",
    "org": "{ orgRoots { name descendants(first: 50) { edges { node { name depth } } } } }",
}
WRITES = {
    "createUser": "mutation($i: CreateUserInput!) { createUser(input: $i) { id email name"
    " version } }",
    "createOrder": "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id status"
    " totalCents version } }",
    "updateOrderStatus": "mutation($i: UpdateOrderStatusInput!) { updateOrderStatus(input: $i)"
    " { id status totalCents version } }",
    "createGroup": "mutation($i: CreateGroupInput!) { createGroup(input: $i) { id name } }",
    "addGroupMember": "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u)"
    " { id } }",
    "createShop": "mutation($i: CreateShopInput!) { createShop(input: $i) { id name lat lng } }",
}
WRITE_SHARE = 0.3

DATA_PLANE = (
    "GetItem",
    "BatchGetItem",
    "Query",
    "Scan",
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "BatchWriteItem",
    "TransactWriteItems",
)
FAULTS = (
    (THROTTLING, 0.025),
    (THROUGHPUT_EXCEEDED, 0.025),
    (RESET_BEFORE, 0.005),
    (RESET_AFTER, 0.005),
)
"""The faults of `--faults` and the share of data-plane calls each picks: 5% throttled, 1%
reset."""


@dataclass
class Minute:
    """What one minute of the run saw."""

    answers: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)
    first_error: str | None = None
    codes: Counter[str] = field(default_factory=Counter)
    """The answers' error codes, and by request kind ("createShop STORE_UNAVAILABLE")."""


@dataclass
class Acknowledged:
    """The writes the server acknowledged, as the answers said they are now."""

    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    members: set[tuple[str, str]] = field(default_factory=set)
    shops: dict[str, dict[str, Any]] = field(default_factory=dict)

    def count(self) -> int:
        return (
            len(self.users)
            + len(self.orders)
            + len(self.groups)
            + len(self.members)
            + len(self.shops)
        )


class Client:
    """One keep-alive connection sending GraphQL requests."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.token = token
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def send(self, query: str, variables: dict[str, Any] | None = None) -> tuple[int, Any]:
        if self.streams is None:
            self.streams = await asyncio.open_connection(HOST, self.port)
        reader, writer = self.streams
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        head = (
            f"POST /graphql HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {self.token}\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        writer.write(head.encode() + body)
        status, answer = await read_response(reader)
        return status, json.loads(answer)

    async def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            await self.streams[1].wait_closed()


class Soak:
    """The load: `concurrency` clients, each sending the next request as soon as the last is
    answered, reads and writes mixed."""

    def __init__(self, port: int, token: str, concurrency: int, seed: int) -> None:
        self.port = port
        self.token = token
        self.concurrency = concurrency
        self.rng = random.Random(seed)
        self.minutes: list[Minute] = []
        self.acknowledged = Acknowledged()
        self.user_ids: list[str] = []
        self.group_ids: list[str] = []
        self.serial = 0

    async def prime(self, client: Client) -> None:
        """The demo tenant's users and groups, for writes to refer to."""
        _, body = await client.send(
            "{ users(first: 100) { edges { node { id groups { edges { node { id } } } } } } }"
        )
        for edge in body["data"]["users"]["edges"]:
            self.user_ids.append(edge["node"]["id"])
            for group in edge["node"]["groups"]["edges"]:
                if group["node"]["id"] not in self.group_ids:
                    self.group_ids.append(group["node"]["id"])

    def _write(self) -> tuple[str, dict[str, Any]]:
        self.serial += 1
        kind = self.rng.choice(list(WRITES))
        rng, n = self.rng, self.serial
        if kind == "createUser":
            return kind, {
                "i": {"email": f"soak{n}.{rng.random():.6f}@example.com", "name": f"S {n}"}
            }
        if kind == "createOrder":
            items = [{"sku": f"SKU-{n}", "name": "thing", "quantity": 1, "unitPriceCents": 100}]
            user = rng.choice(self.user_ids)
            return kind, {"i": {"userId": user, "currency": "EUR", "items": items}}
        if kind == "updateOrderStatus" and self.acknowledged.orders:
            order_id = rng.choice(list(self.acknowledged.orders))
            order = self.acknowledged.orders[order_id]
            status = rng.choice(STATUSES)
            return kind, {
                "i": {"id": order_id, "status": status, "expectedVersion": order["version"]}
            }
        if kind == "addGroupMember" and self.group_ids:
            return kind, {"g": rng.choice(self.group_ids), "u": rng.choice(self.user_ids)}
        if kind == "createShop":
            lat, lng = 52.4 + rng.random() * 0.2, 13.3 + rng.random() * 0.2
            return kind, {"i": {"name": f"Soak shop {n}", "lat": lat, "lng": lng}}
        return "createGroup", {"i": {"name": f"Soak group {n}"}}

    def _remember(self, kind: str, variables: dict[str, Any], data: dict[str, Any]) -> None:
        ack = self.acknowledged
        if kind == "createUser":
            user = data["createUser"]
            ack.users[user["id"]] = user
            self.user_ids.append(user["id"])
        elif kind in ("createOrder", "updateOrderStatus"):
            order = data[kind]
            known = ack.orders.get(order["id"])
            if known is None or known["version"] < order["version"]:  # answers may cross
                ack.orders[order["id"]] = order
        elif kind == "createGroup":
            group = data["createGroup"]
            ack.groups[group["id"]] = group["name"]
            self.group_ids.append(group["id"])
        elif kind == "addGroupMember":
            ack.members.add((variables["g"], variables["u"]))
        elif kind == "createShop":
            shop = data["createShop"]
            ack.shops[shop["id"]] = shop

    async def _one(self, client: Client, minute: Minute) -> None:
        if self.rng.random() < WRITE_SHARE:
            kind, variables = self._write()
            query = WRITES[kind]
        else:
            kind = self.rng.choice(list(READS))
            query = READS[kind]
            variables = {"id": self.rng.choice(self.user_ids)} if "$id" in query else {}
        started = time.perf_counter()
        status, body = await client.send(query, variables)
        minute.latencies.append(time.perf_counter() - started)
        minute.answers += 1
        codes = [error["extensions"]["code"] for error in body.get("errors", [])]
        minute.codes.update(codes)
        minute.codes.update(f"{kind} {code}" for code in codes)
        # a stale expectedVersion (two clients changing one order) is the API working
        if status != 200 or [code for code in codes if code != "CONFLICT"]:
            minute.errors += 1
            minute.first_error = minute.first_error or f"{kind} {status}: {json.dumps(body)[:300]}"
        elif kind in WRITES and not codes:
            self._remember(kind, variables, body["data"])

    async def run(self, minutes: float, sample: Any) -> None:
        clients = [Client(self.port, self.token) for _ in range(self.concurrency)]
        await self.prime(clients[0])
        end = time.monotonic() + minutes * 60

        async def drive(client: Client) -> None:
            while time.monotonic() < end:
                await self._one(client, self.minutes[-1])

        async def tick() -> None:
            while time.monotonic() < end:
                await asyncio.sleep(min(60.0, max(0.0, end - time.monotonic())))
                sample(self.minutes[-1])
                if time.monotonic() < end:
                    self.minutes.append(Minute())

        self.minutes.append(Minute())
        await asyncio.gather(tick(), *(drive(client) for client in clients))
        for client in clients:
            await client.close()

    async def lost(self) -> list[str]:
        """The acknowledged writes that do not read back as acknowledged."""
        client = Client(self.port, self.token)
        ack, lost = self.acknowledged, []
        for user_id, user in ack.users.items():
            _, body = await client.send(READS["user"], {"id": user_id})
            found = body["data"]["user"]
            # memberships added since raise the version
            if (
                found is None
                or {**found, "version": user["version"]} != user
                or found["version"] < user["version"]
            ):
                lost.append(f"user {user_id}")
        for order_id, order in ack.orders.items():
            _, body = await client.send(
                "query($id: ID!) { order(id: $id) { id status totalCents version } }",
                {"id": order_id},
            )
            found = body["data"]["order"]
            # a later change (acknowledged, or one whose answer was lost) is no loss
            if (
                found is None
                or found["version"] < order["version"]
                or (found["version"] == order["version"] and found != order)
            ):
                lost.append(f"order {order_id}: acknowledged {order}, read {body['data']['order']}")
        for group_id, name in ack.groups.items():
            _, body = await client.send(
                "query($id: ID!) { group(id: $id) { name } }", {"id": group_id}
            )
            if body["data"]["group"] != {"name": name}:
                lost.append(f"group {group_id}")
        members: dict[str, set[str]] = {}
        for group_id in {g for g, _ in ack.members}:
            _, body = await client.send(
                "query($id: ID!) { group(id: $id) { members(first: 100) { edges { node { id } } }"
                " } }",
                {"id": group_id},
            )
            edges = body["data"]["group"]["members"]["edges"]
            members[group_id] = {edge["node"]["id"] for edge in edges}
        lost += [f"member {u} of {g}" for g, u in ack.members if u not in members[g]]
        for shop_id, shop in ack.shops.items():
            _, body = await client.send(
                "query($id: ID!) { shop(id: $id) { id name lat lng } }", {"id": shop_id}
            )
            if body["data"]["shop"] != shop:
                lost.append(f"shop {shop_id}")
        await client.close()
        return lost


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and its parts (RssAnon, RssFile, RssShmem) of a process, in KiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
            found[name] = int(value.split()[0])
    return found


def _wait_ready(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError("the server did not come up")


@contextmanager
def faulty_local(data: Path) -> Iterator[FaultProxy]:
    """DynamoDB Local with the table made, behind a fault proxy (no rules yet)."""
    with DynamoDBLocal(data_dir=data / "dynamodb-local") as local:
        client = make_client(
            local.endpoint_url, LOCAL_REGION, 4, LOCAL_KEY_ID, LOCAL_SECRET, read_timeout=60
        )
        try:
            admin.create_table(client, TABLE)
        finally:
            client.close()
        with FaultProxy(local.endpoint_url, seed=20261125) as proxy:
            yield proxy


def run(
    store: str, minutes: float, concurrency: int, data: Path, faults: bool = False
) -> dict[str, Any]:
    if faults and store != "dynamodb-local":
        raise ValueError("faults are injected in front of DynamoDB Local only")
    with contextlib.ExitStack() as stack:
        proxy = stack.enter_context(faulty_local(data)) if faults else None
        return _run(store, minutes, concurrency, data, proxy)


def _run(
    store: str, minutes: float, concurrency: int, data: Path, proxy: FaultProxy | None
) -> dict[str, Any]:
    port = free_port()
    env = {
        **os.environ,
        "KEYGRAPH_JWT_SECRET": SECRET,
        "KEYGRAPH_TENANT_BUDGET": str(10**12),  # one tenant sends everything: no throttling
        "KEYGRAPH_TENANT_REFILL": str(10**12),
    }
    served = store
    if proxy is not None:
        served = "dynamodb"  # at the proxy's endpoint
        env.update(
            KEYGRAPH_DYNAMODB_ENDPOINT=proxy.url,
            KEYGRAPH_TABLE=TABLE.name,
            KEYGRAPH_REGION=LOCAL_REGION,
            AWS_ACCESS_KEY_ID=LOCAL_KEY_ID,
            AWS_SECRET_ACCESS_KEY=LOCAL_SECRET,
        )
    command = [sys.executable, "-m", "server", "serve", "--demo", "--store", served]
    command += ["--port", str(port), "--data", str(data)]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        _wait_ready(f"http://{HOST}:{port}", server)
        if proxy is not None:
            for fault, share in FAULTS:
                proxy.add(fault, operations=DATA_PLANE, probability=share)
        token = issue_token(
            Settings(data_dir=data, jwt_secret=SECRET), TENANT, "soak", roles=["admin"]
        )
        soak = Soak(port, token, concurrency, seed=20261124)
        rows: list[dict[str, Any]] = []

        def sample(minute: Minute) -> None:
            ordered = sorted(minute.latencies)
            row = {
                "minute": len(rows) + 1,
                "answers": minute.answers,
                "errors": minute.errors,
                "p50_ms": round(percentile(ordered, 0.5) * 1000, 1) if ordered else None,
                "p99_ms": round(percentile(ordered, 0.99) * 1000, 1) if ordered else None,
                "memory_kib": memory_kib(server.pid),
                "first_error": minute.first_error,
                "codes": dict(minute.codes),
            }
            rows.append(row)
            print(f"[soak] {store} {json.dumps(row)}", file=sys.stderr)

        asyncio.run(soak.run(minutes, sample))
        if proxy is not None:
            proxy.clear()
        lost = asyncio.run(soak.lost())
    finally:
        server.terminate()
        server.wait(timeout=60)
    warm, last = rows[0]["memory_kib"], rows[-1]["memory_kib"]
    codes: Counter[str] = Counter()
    for row in rows:
        codes.update(row["codes"])
    return {
        "store": store,
        "faults": None if proxy is None else _faults_seen(proxy),
        "codes": dict(codes),
        "minutes": minutes,
        "concurrency": concurrency,
        "write_share": WRITE_SHARE,
        "per_minute": rows,
        "errors": sum(row["errors"] for row in rows),
        "answers": sum(row["answers"] for row in rows),
        "acknowledged_writes": soak.acknowledged.count(),
        "lost_writes": lost,
        "anon_growth_after_warmup": round(last["RssAnon"] / warm["RssAnon"] - 1, 4),
        "rss_growth_after_warmup": round(last["VmRSS"] / warm["VmRSS"] - 1, 4),
    }


def _faults_seen(proxy: FaultProxy) -> dict[str, Any]:
    """The data-plane calls the proxy saw and the faults it injected, by fault."""
    calls = sum(proxy.calls[operation] for operation in DATA_PLANE)
    injected: Counter[str] = Counter()
    for (_, name), count in proxy.injected.items():
        injected[name] += count
    return {
        "calls": calls,
        "injected": dict(injected),
        "shares": {name: round(count / calls, 4) for name, count in injected.items()},
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__)
    parser.add_argument("--store", choices=("embedded", "dynamodb-local"), default="embedded")
    parser.add_argument("--minutes", type=float, default=10.0, help="default 10")
    parser.add_argument("--concurrency", type=int, default=8, help="default 8 connections")
    parser.add_argument(
        "--faults",
        action="store_true",
        help="DynamoDB Local behind a proxy throttling 5%% of calls and resetting 1%%",
    )
    parser.add_argument("--out", type=Path, help="default bench/results/soak-<store>.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keygraph-soak-") as tmp:
        result = run(args.store, args.minutes, args.concurrency, Path(tmp), args.faults)
    result["machine"] = machine_info()
    name = f"soak-{args.store}" + ("-faults" if args.faults else "")
    out = args.out or RESULTS / f"{name}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    summary = {k: result[k] for k in ("errors", "answers", "acknowledged_writes", "codes")}
    print(
        json.dumps(
            {
                **summary,
                "lost": len(result["lost_writes"]),
                "anon_growth": result["anon_growth_after_warmup"],
            }
        )
    )


if __name__ == "__main__":
    main()

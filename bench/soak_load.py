"""The soak's load: clients sending a fixed mix of reads and writes, what each minute saw,
and the writes the server acknowledged, read back at the end."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench.loadgen import HOST, read_response

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
    answered, reads and writes mixed (`write_share` of the requests are writes)."""

    def __init__(
        self, port: int, token: str, concurrency: int, seed: int, write_share: float = WRITE_SHARE
    ) -> None:
        self.port = port
        self.write_share = write_share
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
        if self.rng.random() < self.write_share:
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

"""Racing mutations on shared objects, in rounds: each round a batch of mutations drawn by
hypothesis (which, on what, and how many event-loop turns each waits before it starts) runs
at once, then the invariants are checked on what the store holds and what the API lists.

- Org trees: creates, moves and deletes under one parent and among the roots, both kept
  just under their cap (MAX_CHILDREN): no parent ever holds more, and every stored child is
  listed.
- Groups: members added and removed, groups deleted, users updated, on shared users and
  groups: a user's group ids are exactly its memberships, and every membership's user
  exists, and its group too unless the group's delete is still cleaning up.
- Orders: status changes with the same expectedVersion: at most one wins per version,
  versions only grow, and the user's copy of an order agrees with the order.

A scenario sets up its own objects through the API, so it runs against the app in process or
a served one alike."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from hypothesis import strategies as st

from generated.models.cleanup_task import CleanupTask
from keygraph.plan import Item
from server.domain.org import MAX_CHILDREN
from tests.ids import from_global_id
from tests.server.fuzz.checks import Failures
from tests.server.fuzz.target import budget, codes, generate

TENANT_PREFIX = "T#acme#"
MOST_YIELDS = 4
"""The most event-loop turns a racing mutation waits before it starts."""


class Racer(Protocol):
    """Where a scenario sends its requests (as acme) and reads the table from."""

    async def post(self, body: Any, headers: dict[str, str] | None = None) -> httpx.Response: ...

    async def items(self) -> list[Item]: ...


@dataclass(frozen=True)
class Move:
    """One racing mutation: its kind, which objects (indexes into the round's state, taken
    modulo their count) and how many event-loop turns it waits first."""

    kind: str
    first: int
    second: int
    yields: int


def rounds(kinds: tuple[str, ...]) -> st.SearchStrategy[list[Move]]:
    """A round: two to eight mutations of the given kinds."""
    move = st.builds(
        Move,
        st.sampled_from(kinds),
        st.integers(0, 200),
        st.integers(0, 200),
        st.integers(0, MOST_YIELDS),
    )
    return st.lists(move, min_size=2, max_size=8)


class Stored:
    """The table's items at one moment."""

    def __init__(self, items: list[Item]) -> None:
        self.items = items

    def acme(self, kind: str) -> list[Item]:
        """acme's items of one type."""
        return [
            item
            for item in self.items
            if item.get("_type") == kind and str(item["PK"]).startswith(TENANT_PREFIX)
        ]

    def pending_cleanups(self) -> set[str]:
        """The subjects of acme's cleanups still to finish (a deleted group's id)."""
        return {
            str(item["subject"])
            for item in self.items
            if item.get("_type") == CleanupTask.TYPE and item.get("tenant") == "acme"
        }


HUNT_SHARE = 10
"""A hunt plays one round for every HUNT_SHARE of KEYGRAPH_FUZZ_EXAMPLES."""


def plans(kinds: tuple[str, ...], ci: int) -> list[list[Move]]:
    """The rounds to play (`ci` in CI): hypothesis's draws past its first, simplest one."""
    return generate(rounds(kinds), budget(ci, HUNT_SHARE) + 1)[1:]


class Scenario:
    """Shared set-up and checks of the scenarios."""

    kinds: tuple[str, ...] = ()

    def __init__(self, racer: Racer, failures: Failures) -> None:
        self.racer = racer
        self.failures = failures

    async def call(self, query: str, variables: dict[str, Any], label: str) -> dict[str, Any]:
        """The answer's data (empty when refused); every answer is checked, and the store
        (a healthy one) must never be reported unavailable."""
        response = await self.racer.post({"query": query, "variables": variables})
        body = self.failures.answer(response, label) or {}
        if "STORE_UNAVAILABLE" in codes(body):
            self.failures.add("STORE_UNAVAILABLE from a healthy store", label)
        data = body.get("data")
        return data if isinstance(data, dict) and not body.get("errors") else {}

    async def must(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """The data of a set-up call or read, which must succeed."""
        response = await self.racer.post({"query": query, "variables": variables})
        body = response.json()
        assert not body.get("errors"), (
            f"a read or set-up call failed: {codes(body)}\n" + self.failures.report(),
            query,
            body,
        )
        data: dict[str, Any] = body["data"]
        return data

    async def stored(self) -> Stored:
        """What the table holds now."""
        return Stored(await self.racer.items())

    async def race(self, moves: list[Move]) -> None:
        """The round's mutations, all at once."""
        state = await self.state()

        async def one(move: Move) -> None:
            for _ in range(move.yields):
                await asyncio.sleep(0)
            await self.run(move, state)

        await asyncio.gather(*(one(move) for move in moves))
        await self.check(await self.stored())

    async def setup(self) -> None:
        raise NotImplementedError

    async def state(self) -> Any:
        raise NotImplementedError

    async def run(self, move: Move, state: Any) -> None:
        raise NotImplementedError

    async def check(self, stored: Stored) -> None:
        raise NotImplementedError


def _pick(items: list[Any], index: int) -> Any:
    return items[index % len(items)] if items else None


CREATE_NODE = "mutation($i: CreateOrgNodeInput!) { createOrgNode(input: $i) { id version } }"
MOVE_NODE = "mutation($i: MoveOrgNodeInput!) { moveOrgNode(input: $i) { node { id } complete } }"
DELETE_NODE = "mutation($i: DeleteOrgNodeInput!) { deleteOrgNode(input: $i) { deletedId } }"
NODE = """query($id: ID!) { orgNode(id: $id) { id version depth children { id version } } }"""
ROOTS = "{ orgRoots { id version } }"
Node = tuple[str, int]


class OrgScenario(Scenario):
    """A parent and the roots (which have no parent item to guard) kept just under
    MAX_CHILDREN, and a second parent to move nodes from and to."""

    kinds = (
        "create",
        "move in",
        "move out",
        "delete",
        "create root",
        "create root",
        "move to root",
    )
    margin = 1
    batch = 8

    async def setup(self) -> None:
        self.full = (await self.must(CREATE_NODE, {"i": {"name": "full"}}))["createOrgNode"]["id"]
        self.spare = (await self.must(CREATE_NODE, {"i": {"name": "spare"}}))["createOrgNode"]["id"]
        await self.top_up()

    async def top_up(self) -> None:
        """Fill the full parent and the roots to just under the cap, the spare to 3, a
        batch of creates at a time (each batch stays below the cap), until a batch adds
        nothing."""
        while True:
            full, spare, roots = await self.state()
            wanted = [
                (self.full, MAX_CHILDREN - self.margin - len(full)),
                (self.spare, 3 - len(spare)),
                (None, MAX_CHILDREN - self.margin - len(roots)),
            ]
            creates = [
                self.call(CREATE_NODE, {"i": {"name": f"n{n}", "parentId": parent}}, "top up")
                for parent, missing in wanted
                for n in range(min(missing, self.batch))
            ]
            if not creates or not any(await asyncio.gather(*creates)):
                return

    async def state(self) -> tuple[list[Node], list[Node], list[Node]]:
        full = await self.must(NODE, {"id": self.full})
        spare = await self.must(NODE, {"id": self.spare})
        roots = (await self.must(ROOTS, {}))["orgRoots"]
        return (
            [(c["id"], c["version"]) for c in full["orgNode"]["children"]],
            [(c["id"], c["version"]) for c in spare["orgNode"]["children"]],
            [(r["id"], r["version"]) for r in roots if r["id"] not in (self.full, self.spare)],
        )

    async def run(self, move: Move, state: tuple[list[Node], list[Node], list[Node]]) -> None:
        full, spare, roots = state
        label = f"org {move}"
        if move.kind == "create":
            await self.call(CREATE_NODE, {"i": {"name": "raced", "parentId": self.full}}, label)
        elif move.kind == "create root":
            await self.call(CREATE_NODE, {"i": {"name": "raced root"}}, label)
        elif move.kind in ("move in", "move to root", "move out"):
            source = full if move.kind == "move out" else spare
            node = _pick(source, move.first)
            if node is None:
                return
            destination = {"move in": self.full, "move to root": None, "move out": self.spare}
            moved = {"id": node[0], "expectedVersion": node[1]}
            moved["newParentId"] = destination[move.kind]
            await self.call(MOVE_NODE, {"i": moved}, label)
        else:
            node = _pick(full + roots, move.first)
            if node is not None:
                gone = {"id": node[0], "expectedVersion": node[1], "cascade": True}
                await self.call(DELETE_NODE, {"i": gone}, label)

    async def check(self, stored: Stored) -> None:
        by_parent: dict[str, set[str]] = {}
        for item in stored.acme("ORG_NODE"):
            by_parent.setdefault(str(item["parent_ref"]), set()).add(str(item["node_id"]))
        for parent, children in by_parent.items():
            if len(children) > MAX_CHILDREN:
                self.failures.add(
                    f"more than {MAX_CHILDREN} children", f"{parent}: {len(children)} stored"
                )
        full, spare, roots = await self.state()
        for parent, listed in ((self.full, full), (self.spare, spare)):
            local = _own_id(parent)
            self._listed(parent, {n for n, _ in listed}, by_parent.get(local, set()))
        listed_roots = {n for n, _ in roots} | {self.full, self.spare}
        self._listed("the roots", listed_roots, by_parent.get("ROOT", set()))
        await self.top_up()

    def _listed(self, parent: str, listed: set[str], stored: set[str]) -> None:
        local = {_own_id(node) for node in listed}
        if local != stored:
            missing = len(stored - local)
            extra = len(local - stored)
            self.failures.add(
                "stored children not listed", f"{parent}: {missing} unlisted, {extra} not stored"
            )


def _own_id(global_id: str) -> str:
    """An org node's own id: the last part of the path its global id names, joined with dots."""
    return from_global_id(global_id)[1].split(".")[-1]


CREATE_USER = "mutation($i: CreateUserInput!) { createUser(input: $i) { id version } }"
UPDATE_USER = "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id version } }"
CREATE_GROUP = "mutation($i: CreateGroupInput!) { createGroup(input: $i) { id version } }"
DELETE_GROUP = "mutation($i: DeleteInput!) { deleteGroup(input: $i) { deletedId } }"
ADD = "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id version } }"
REMOVE = "mutation($g: ID!, $u: ID!) { removeGroupMember(groupId: $g, userId: $u) { id } }"
GROUP_STATE = "query($id: ID!) { group(id: $id) { id version } }"
USER_STATE = "query($id: ID!) { user(id: $id) { id version } }"


class GroupScenario(Scenario):
    """Three users in two groups, memberships and deletes of the groups racing updates of
    the users."""

    kinds = ("add", "remove", "delete group", "update user", "update user")

    async def setup(self) -> None:
        self.users = []
        for n in range(3):
            created = await self.must(
                CREATE_USER, {"i": {"email": f"racer{n}@example.com", "name": f"Racer {n}"}}
            )
            self.users.append(created["createUser"]["id"])
        self.groups: list[str] = []
        self.versions: dict[str, int] = {}
        await self.top_up()

    async def top_up(self) -> None:
        """Two live groups, replacing deleted ones with groups every user belongs to."""
        live = []
        for group in self.groups:
            if (await self.must(GROUP_STATE, {"id": group}))["group"] is not None:
                live.append(group)
        while len(live) < 2:
            created = await self.must(CREATE_GROUP, {"i": {"name": f"g{len(live)}"}})
            live.append(created["createGroup"]["id"])
            for user in self.users:
                await self.must(ADD, {"g": live[-1], "u": user})
        self.groups = live

    async def state(self) -> dict[str, int]:
        versions = {}
        for group in self.groups:
            versions[group] = (await self.must(GROUP_STATE, {"id": group}))["group"]["version"]
        for user in self.users:
            versions[user] = (await self.must(USER_STATE, {"id": user}))["user"]["version"]
        return versions

    async def run(self, move: Move, state: dict[str, int]) -> None:
        group = _pick(self.groups, move.first)
        user = _pick(self.users, move.second)
        label = f"groups {move}"
        if move.kind == "add":
            await self.call(ADD, {"g": group, "u": user}, label)
        elif move.kind == "remove":
            await self.call(REMOVE, {"g": group, "u": user}, label)
        elif move.kind == "delete group":
            await self.call(
                DELETE_GROUP, {"i": {"id": group, "expectedVersion": state[group]}}, label
            )
        else:
            changed = {"id": user, "expectedVersion": state[user], "name": f"renamed {move}"}
            await self.call(UPDATE_USER, {"i": changed}, label)

    async def check(self, stored: Stored) -> None:
        users = {str(i["user_id"]): i for i in stored.acme("USER")}
        groups = {str(i["group_id"]) for i in stored.acme("GROUP")}
        pending = stored.pending_cleanups()
        members: dict[str, set[str]] = {}
        for item in stored.acme("MEMBER"):
            members.setdefault(str(item["user_id"]), set()).add(str(item["group_id"]))
            if item["group_id"] not in groups | pending:
                self.failures.add("a membership of a deleted group", str(item["group_id"]))
            if item["user_id"] not in users:
                self.failures.add("a membership of a deleted user", str(item["user_id"]))
        for user_id, user in users.items():
            listed = set(user.get("group_ids") or [])
            if listed != members.get(user_id, set()):
                self.failures.add(
                    "a user's group ids differ from its memberships",
                    f"{user_id}: ids {sorted(listed)} memberships "
                    f"{sorted(members.get(user_id, set()))}",
                )
            version = int(user["version"])
            if version < self.versions.get(user_id, 0):
                self.failures.add("a user's version went down", user_id)
            self.versions[user_id] = version
        await self.top_up()


CREATE_ORDER = "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id version } }"
SET_STATUS = (
    "mutation($i: UpdateOrderStatusInput!) { updateOrderStatus(input: $i) { id version status } }"
)
ORDER_STATE = "query($id: ID!) { order(id: $id) { id version status } }"
STATUSES = ["PENDING", "PAID", "SHIPPED", "DELIVERED", "CANCELLED"]


class OrderScenario(Scenario):
    """Two orders of one user, their status changed at once with the same expectedVersion."""

    kinds = ("status", "status", "status", "create")

    async def setup(self) -> None:
        created = await self.must(
            CREATE_USER, {"i": {"email": "buyer@example.com", "name": "Buyer"}}
        )
        self.user = created["createUser"]["id"]
        self.orders = [await self._create() for _ in range(2)]
        self.versions: dict[str, int] = {}
        self.wins: list[tuple[str, int]] = []

    async def _create(self) -> str:
        item = {"sku": "S", "name": "thing", "quantity": 1, "unitPriceCents": 100}
        new = {"userId": self.user, "currency": "EUR", "items": [item]}
        order: str = (await self.must(CREATE_ORDER, {"i": new}))["createOrder"]["id"]
        return order

    async def state(self) -> dict[str, int]:
        self.wins = []
        return {
            order: (await self.must(ORDER_STATE, {"id": order}))["order"]["version"]
            for order in self.orders
        }

    async def run(self, move: Move, state: dict[str, int]) -> None:
        if move.kind == "create":
            item = {"sku": "S", "name": "raced", "quantity": 1, "unitPriceCents": 1}
            new = {"userId": self.user, "currency": "EUR", "items": [item]}
            await self.call(CREATE_ORDER, {"i": new}, f"orders {move}")
            return
        order = _pick(self.orders, move.first)
        status = STATUSES[move.second % len(STATUSES)]
        changed = {"id": order, "status": status, "expectedVersion": state[order]}
        data = await self.call(SET_STATUS, {"i": changed}, f"orders {move}")
        if data:
            self.wins.append((order, state[order]))

    async def check(self, stored: Stored) -> None:
        for win in set(self.wins):
            if self.wins.count(win) > 1:
                self.failures.add("two changes won with one expectedVersion", str(win))
        orders = {str(i["order_id"]): i for i in stored.acme("ORDER")}
        copies = {str(i["order_id"]): i for i in stored.acme("USER_ORDER")}
        for order_id, order in orders.items():
            copy = copies.get(order_id)
            fields = ("status", "version", "total_cents")
            if copy is None or any(copy[f] != order[f] for f in fields):
                self.failures.add("the user's copy of an order differs", order_id)
            version = int(order["version"])
            if version < self.versions.get(order_id, 0):
                self.failures.add("an order's version went down", order_id)
            self.versions[order_id] = version
        won = dict(self.wins)
        for global_id in self.orders:
            now = orders.get(from_global_id(global_id)[1])
            if now is not None and global_id in won and now["version"] != won[global_id] + 1:
                self.failures.add("a winning change did not raise the version by one", global_id)


SCENARIOS: dict[str, type[Scenario]] = {
    "org": OrgScenario,
    "groups": GroupScenario,
    "orders": OrderScenario,
}


async def play(
    scenario: Scenario, plans: list[list[Move]], pause: Callable[[int], Awaitable[None]]
) -> None:
    """The scenario's set-up, then each round, `pause(its number)` before it."""
    await scenario.setup()
    for number, moves in enumerate(plans):
        await pause(number)
        await scenario.race(moves)

"""Seed a tenant with demo or benchmark data: users with their email claims, orders with
their user-side copies, groups with members, an org tree and shops around a city.

Deterministic: every id, name, time and position comes from a random generator seeded with
`rng_seed` and the sizes, so the same call builds the same items. Idempotent: the items are
written in batches of 25 (several batches in flight), then one last item, the marker, with
put-if-absent; a run that finds the marker already there writes nothing. A run interrupted
before the marker rewrites the same items and completes. Seeds of other sizes or rng seeds get
their own ids and email domain, so they add a second dataset rather than clash with the first.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import astuple, dataclass, field
from datetime import UTC, datetime, timedelta

from tqdm import tqdm

from generated.models.enums import OrderStatus
from generated.models.membership import Membership
from generated.models.order import Order
from generated.models.user import User
from generated.table import TABLE
from keygraph.errors import ConditionFailed
from keygraph.ids import ulid
from keygraph.plan import Condition, Get, Item, Put
from keygraph.store import Store
from server.domain.geo import destination
from server.domain.groups import (
    in_key_order,
    new_group,
    new_group_items,
    new_membership,
    new_membership_items,
)
from server.domain.orders import new_order, new_order_items
from server.domain.org import org_node_record
from server.domain.shops import shop_record
from server.domain.users import new_user, new_user_items
from server.seed import data as seed_data

BATCH_WRITE_LIMIT = 25
CONCURRENT_BATCHES = 8
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
"""Seed data is dated from here on."""
SPAN_MS = 180 * 24 * 3600 * 1000
"""Creation times are spread over about half a year."""


@dataclass(frozen=True, slots=True)
class SeedSizes:
    users: int
    orders: int
    groups: int
    org_nodes: int
    org_depth: int
    shops: int
    max_members: int = 20
    """Each group gets between 1 and this many members."""

    def __post_init__(self) -> None:
        if min(astuple(self)) < 0:
            raise ValueError("seed sizes must not be negative")
        if self.users == 0 and (self.orders or self.groups):
            raise ValueError("orders and groups need users")
        if self.org_nodes and not 1 <= self.org_depth <= self.org_nodes:
            raise ValueError("an org tree needs 1 <= depth <= nodes")

    @classmethod
    def demo(cls) -> SeedSizes:
        return cls(users=50, orders=200, groups=5, org_nodes=60, org_depth=4, shops=300)

    @classmethod
    def bench(cls) -> SeedSizes:
        return cls(users=2000, orders=20000, groups=200, org_nodes=1000, org_depth=6, shops=20000)


@dataclass(frozen=True, slots=True)
class SeedReport:
    tenant: str
    tag: str
    """Names this dataset (rng seed and sizes): its email domain is s<tag>.example.org."""
    already_seeded: bool
    written: dict[str, int] = field(default_factory=dict)
    """Items written by this run, by item type; empty when the tenant was already seeded."""
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.written.values())


class Ids:
    """ULIDs from a seeded generator: time-sortable like the server's own, but repeatable."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def at(self, when: datetime) -> str:
        return ulid(round(when.timestamp() * 1000), self._rng.getrandbits(80))


def dataset_tag(sizes: SeedSizes, rng_seed: int) -> str:
    return hashlib.sha256(repr((rng_seed, astuple(sizes))).encode()).hexdigest()[:8]


def spread_times(rng: random.Random, count: int, start: datetime) -> list[datetime]:
    """count sorted times, whole milliseconds, within SPAN_MS after start."""
    offsets = sorted(rng.randrange(SPAN_MS) for _ in range(count))
    return [start + timedelta(milliseconds=offset) for offset in offsets]


def level_sizes(nodes: int, depth: int) -> list[int]:
    """How many nodes each level of a tree of `nodes` over `depth` levels holds: one root,
    then a roughly constant fan-out f with 1 + f + ... + f^(depth-1) = nodes."""
    if depth == 1:
        return [nodes]
    low, high = 1.0, float(nodes)
    for _ in range(60):
        fan = (low + high) / 2
        if sum(fan**level for level in range(depth)) < nodes:
            low = fan
        else:
            high = fan
    sizes = [max(1, round(low**level)) for level in range(depth - 1)]
    sizes.append(max(1, nodes - sum(sizes)))
    while sum(sizes) > nodes:
        widest = max(range(1, depth), key=lambda level: sizes[level])
        sizes[widest] -= 1
    return sizes


def ascii_name(name: str) -> str:
    return name.lower().replace("ä", "ae").replace("ö", "oe").replace("ü", "ue")


def user_records(sizes: SeedSizes, tag: str, rng: random.Random) -> list[User]:
    ids = Ids(rng)
    users = []
    for index, when in enumerate(spread_times(rng, sizes.users, EPOCH)):
        first, last = rng.choice(seed_data.FIRST_NAMES), rng.choice(seed_data.LAST_NAMES)
        email = f"{ascii_name(first)}.{ascii_name(last)}.{index + 1}@s{tag}.example.org"
        users.append(new_user(email, f"{first} {last}", user_id=ids.at(when), now=when))
    return users


def order_records(users: Sequence[User], sizes: SeedSizes, rng: random.Random) -> list[Order]:
    """Orders of 1-5 distinct products each, placed by random users after they joined."""
    ids = Ids(rng)
    statuses = list(OrderStatus)
    orders = []
    for _ in range(sizes.orders):
        user = rng.choice(users)
        when = user.created_at + timedelta(milliseconds=rng.randrange(SPAN_MS))
        lines = [
            {"sku": sku, "name": name, "quantity": rng.randint(1, 3), "unit_price_cents": price}
            for sku, name, price in rng.sample(seed_data.PRODUCTS, rng.randint(1, 5))
        ]
        status = rng.choice(statuses)
        orders.append(
            new_order(user.user_id, "EUR", lines, order_id=ids.at(when), status=status, now=when)
        )
    return orders


def group_items(
    tenant: str, users: Sequence[User], sizes: SeedSizes, rng: random.Random
) -> Iterator[Item]:
    """Groups, each followed by its 1..max_members memberships."""
    ids = Ids(rng)
    topics = seed_data.GROUP_TOPICS
    for index, when in enumerate(spread_times(rng, sizes.groups, EPOCH)):
        name = f"{topics[index % len(topics)]} {index + 1}"
        group = new_group(name, group_id=ids.at(when), now=when)
        yield from new_group_items(tenant, group)
        for user in rng.sample(users, rng.randint(1, min(sizes.max_members, len(users)))):
            joined = max(when, user.created_at) + timedelta(milliseconds=rng.randrange(SPAN_MS))
            membership = new_membership(user.user_id, group.group_id, now=joined)
            yield from new_membership_items(tenant, membership)


def org_items(tenant: str, sizes: SeedSizes, rng: random.Random) -> Iterator[Item]:
    """A tree in level order (parents first); children spread evenly over their parents."""
    if sizes.org_nodes == 0:
        return
    ids = Ids(rng)
    levels: list[list[tuple[str, ...]]] = []
    departments = seed_data.DEPARTMENTS
    for level, count in enumerate(level_sizes(sizes.org_nodes, sizes.org_depth)):
        paths: list[tuple[str, ...]] = []
        for index in range(count):
            when = EPOCH + timedelta(seconds=level * 3600 + index)
            parent: tuple[str, ...] = levels[-1][index * len(levels[-1]) // count] if levels else ()
            name = (
                "Headquarters"
                if level == 0 and count == 1
                else f"{departments[index % len(departments)]} {level}.{index + 1}"
            )
            record = org_node_record(ids.at(when), name, parent, when)
            paths.append(record.path)
            yield record.to_item(tenant)
        levels.append(paths)


def shop_items(tenant: str, sizes: SeedSizes, rng: random.Random) -> Iterator[Item]:
    """Shops spread uniformly over the demo city's disc."""
    ids = Ids(rng)
    city = seed_data.BERLIN
    for index, when in enumerate(spread_times(rng, sizes.shops, EPOCH)):
        bearing = rng.uniform(0.0, 360.0)
        km = city.radius_km * math.sqrt(rng.random())
        lat, lng = destination(city.lat, city.lng, bearing, km)
        name = f"{rng.choice(seed_data.SHOP_KINDS)} {rng.choice(seed_data.STREETS)} {index + 1}"
        yield shop_record(ids.at(when), name, round(lat, 6), round(lng, 6), when).to_item(tenant)


def sections(tenant: str, sizes: SeedSizes, rng_seed: int) -> list[Callable[[], list[Item]]]:
    """The dataset in write order, as builders of its sections: people (users, email claims,
    orders, groups), shops, the org tree. Each kind draws from its own generator, so one
    kind's size does not shift another's values."""
    tag = dataset_tag(sizes, rng_seed)

    def rng(kind: str) -> random.Random:
        return random.Random(f"{tag}/{kind}")

    def people() -> list[Item]:
        users = user_records(sizes, tag, rng("users"))
        groups = list(group_items(tenant, users, sizes, rng("groups")))
        member_of: dict[str, list[str]] = {}
        for item in groups:
            if item["_type"] == Membership.TYPE:
                member_of.setdefault(item["user_id"], []).append(item["group_id"])
        items: list[Item] = []
        for user in users:
            group_ids = in_key_order(member_of.get(user.user_id, ()))
            items.extend(new_user_items(tenant, user.model_copy(update={"group_ids": group_ids})))
        for order in order_records(users, sizes, rng("orders")):
            items.extend(new_order_items(tenant, order))
        items.extend(groups)
        return items

    return [
        people,
        lambda: list(shop_items(tenant, sizes, rng("shops"))),
        lambda: list(org_items(tenant, sizes, rng("org"))),
    ]


def build_items(tenant: str, sizes: SeedSizes, rng_seed: int) -> list[Item]:
    """Every item of the dataset, in write order."""
    return [item for build in sections(tenant, sizes, rng_seed) for item in build()]


def chunked(items: Sequence[Item], size: int) -> Iterator[Sequence[Item]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


async def write_batches(
    store: Store, items: Sequence[Item], written: Callable[[int], object]
) -> None:
    """batch_write in chunks of 25, CONCURRENT_BATCHES chunks in flight at a time; `written`
    hears how many items each finished chunk held. The first failure stops every writer."""
    chunks = chunked(items, BATCH_WRITE_LIMIT)

    async def worker() -> None:
        for chunk in chunks:
            await store.batch_write([Put(item) for item in chunk])
            written(len(chunk))

    workers = [asyncio.ensure_future(worker()) for _ in range(CONCURRENT_BATCHES)]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise


async def seed(
    store: Store, tenant: str, sizes: SeedSizes, rng_seed: int = 0, progress: bool = True
) -> SeedReport:
    """Write the dataset of (sizes, rng_seed) into tenant unless it is there already."""
    started = time.perf_counter()
    tag = dataset_tag(sizes, rng_seed)
    # The marker is the last item written; only its section is built before looking it up.
    pending = sections(tenant, sizes, rng_seed)
    last: list[Item] = []
    while pending and not last:
        last = pending.pop()()
    if not last:
        return SeedReport(tenant, tag, already_seeded=False)
    marker = last[-1]
    if await store.get(Get(TABLE.primary_key(marker), consistent=True)) is not None:
        return SeedReport(tenant, tag, True, seconds=time.perf_counter() - started)
    items = [item for build in pending for item in build()] + last
    body = items[:-1]
    with tqdm(total=len(items), desc=f"seed {tenant}", unit="item", disable=not progress) as bar:
        await write_batches(store, body, bar.update)
        # A concurrent run of the same seed may finish first: same items, same marker.
        with contextlib.suppress(ConditionFailed):
            await store.put(Put(marker, conditions=(Condition("not_exists", TABLE.partition_key),)))
        bar.update(1)
    written = Counter(str(item["_type"]) for item in items)
    return SeedReport(tenant, tag, False, dict(written), time.perf_counter() - started)

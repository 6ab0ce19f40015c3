"""`table plan`: compare the live table and its items with a spec and list the ordered steps
that bring them there: create each missing index (one UpdateTable each, waited on until
ACTIVE), set TTL and backups, backfill the entities whose items the spec now stores
differently, and (only when allowed) delete indexes the spec no longer has. What cannot be
done online is refused, with the procedure that does it.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import orjson

from keygraph import keycodec
from keygraph.admin import LiveTable, TableAdmin
from keygraph.errors import BadArgument
from keygraph.plan import IndexDef, Item, Scan, StreamView
from keygraph.store import Store

from .backfill import PrimaryKeyChanged, Unreadable, judge
from .target import OWN_PREFIX, Target

EXAMPLES = 3
"""Examples kept of each kind of refused item."""
PAGE = 1000
NOMINAL_RATE = {"embedded": 5000.0, "dynamodb": 500.0}
"""Items a second a backfill writes when no rate is set, for the estimate (bench/README.md
has measured rates)."""

PRIMARY_KEY_PROCEDURE = (
    "A primary key cannot change in place: items would have to move, and a reader would miss "
    "them mid-way. Do it in four deploys: (1) dual write: add the new key as a new entity "
    "(its own type) and make every write put both; (2) backfill: copy each old item to its "
    "new key (a one-off job over this plan's scan); (3) shadow read: read the new entity, "
    "compare with the old, until they agree; (4) cut over: read and write only the new "
    "entity, then delete the old items."
)


@dataclass(frozen=True, slots=True)
class IndexStep:
    action: Literal["create", "delete"]
    index: IndexDef

    def describe(self) -> str:
        keys = ", ".join(k for k in (self.index.partition_key, self.index.sort_key) if k)
        what = f"{self.action} index {self.index.name} ({keys}, {self.index.projection})"
        if self.action == "create":
            return what + ": UpdateTable, then wait until ACTIVE"
        return what + ": UpdateTable (destructive: its queries stop working)"


@dataclass(frozen=True, slots=True)
class SettingStep:
    setting: Literal["ttl", "point_in_time_recovery", "stream"]
    value: str | bool | None

    def describe(self) -> str:
        if self.setting == "ttl":
            return f"TTL on {self.value}" if self.value else "TTL off"
        if self.setting == "stream":
            if not self.value:
                return "change stream off: UpdateTable StreamSpecification"
            return f"change stream on ({self.value}): UpdateTable StreamSpecification"
        return f"point-in-time recovery {'on' if self.value else 'off'}"


@dataclass(slots=True)
class EntityCount:
    """A backfill's work on one entity."""

    items: int = 0
    to_update: int = 0
    write_units: int = 0
    attributes: set[str] = field(default_factory=set)


@dataclass(slots=True)
class Plan:
    table: str
    store: str
    fingerprint: str
    tenant: str | None
    create_table: bool = False
    steps: list[IndexStep | SettingStep] = field(default_factory=list)
    """Index creations and settings, before the backfill."""
    backfill: dict[str, EntityCount] = field(default_factory=dict)
    deletes: list[IndexStep] = field(default_factory=list)
    """After the backfill; kept out of the plan unless destruction is allowed."""
    notes: list[str] = field(default_factory=list)
    """What the plan leaves alone, and why (an index the spec lacks, backups a store lacks)."""
    refused: list[str] = field(default_factory=list)
    other_items: dict[str, int] = field(default_factory=dict)
    """Items of no entity of the spec, by type, left as they are."""
    scanned: int = 0
    seconds: float = 0.0
    rate: float = 0.0
    """Items a second the estimate assumes."""

    @property
    def to_update(self) -> int:
        return sum(count.to_update for count in self.backfill.values())

    @property
    def empty(self) -> bool:
        return not (self.create_table or self.steps or self.to_update or self.deletes)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for count in data["backfill"].values():
            count["attributes"] = sorted(count["attributes"])
        return data

    def identity(self) -> str:
        """What a saved plan is checked against before it is carried out."""
        steps = [step.describe() for step in (*self.steps, *self.deletes)]
        return orjson.dumps([self.table, self.fingerprint, self.tenant, steps]).decode()

    def render(self) -> str:
        lines = [
            f"table {self.table} ({self.store}), spec {self.fingerprint}, "
            + (f"tenant {self.tenant}" if self.tenant else "every tenant")
            + f": {self.scanned:,} items read in {self.seconds:.1f} s"
        ]
        number = 0

        def add(text: str) -> None:
            nonlocal number
            number += 1
            lines.append(f"  {number}. {text}")

        if self.create_table:
            add("create the table with every index")
        for step in self.steps:
            add(step.describe())
        for name, count in sorted(self.backfill.items()):
            if count.to_update:
                seconds = count.to_update / self.rate
                add(
                    f"backfill {name}: {count.to_update:,} of {count.items:,} items "
                    f"({', '.join(sorted(count.attributes))}), ~{count.write_units:,} write "
                    f"units, ~{_duration(seconds)}"
                )
        for step in self.deletes:
            add(step.describe())
        if number == 0:
            lines.append("  nothing to do: the table and its items are as the spec says")
        for note in self.notes:
            lines.append(f"  note: {note}")
        for kind, found in sorted(self.other_items.items()):
            lines.append(f"  left as they are: {found:,} items of type {kind} (not in the spec)")
        for refusal in self.refused:
            lines.append(f"  refused: {refusal}")
        return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(seconds, 0.1):.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def tenant_prefixes(target: Target, tenant: str | None) -> list[str | None]:
    """The partition-key prefixes a scan of the tenant reads (one None: the whole table)."""
    if tenant is None:
        return [None]
    return [head + keycodec.escape(tenant) for head in target.tenant_prefixes]


async def scan_items(
    store: Store, target: Target, tenant: str | None, start: dict[str, str] | None = None
) -> AsyncIterator[tuple[list[Item], dict[str, str] | None]]:
    """The table's items (the tenant's, when given) page by page, with the key each page
    ends at (None after the last). `start` resumes after a key."""
    resume = None if start is None else start[target.table.partition_key]
    for prefix in sorted(tenant_prefixes(target, tenant), key=lambda p: p or ""):
        position = None
        if resume is not None and prefix is not None and not resume.startswith(prefix):
            if prefix < resume:
                continue  # read before the checkpoint
        elif resume is not None:
            position = start
        while True:
            page = await store.scan(Scan(partition_prefix=prefix, limit=PAGE, start=position))
            items = [item for item in page.items if _in_tenant(target, item, tenant)]
            yield items, page.last_key
            if page.last_key is None:
                break
            position = page.last_key


def _in_tenant(target: Target, item: Item, tenant: str | None) -> bool:
    """Whether an item is the tenant's (any item but keygraph's own, when tenant is None)."""
    if str(item.get(target.table.partition_key, "")).startswith(OWN_PREFIX):
        return False
    if tenant is None:
        return True
    entity = target.entities.get(str(item.get("_type")))
    if entity is None:
        return False
    try:
        return entity.tenant_of(item) == tenant
    except BadArgument:
        return True  # a key this spec does not build: the plan reports it


def _index_steps(target: Target, live: LiveTable, allow_destructive: bool, plan: Plan) -> None:
    wanted = {index.name: index for index in target.table.indexes}
    for name, index in wanted.items():
        found = live.indexes.get(name)
        if found is None:
            plan.steps.append(IndexStep("create", index))
        elif found.index != index:
            change = f"index {name} is {found.index}, the spec has {index}"
            if allow_destructive:
                plan.deletes.append(IndexStep("delete", found.index))
                plan.deletes.append(IndexStep("create", index))
            else:
                plan.refused.append(
                    f"{change}: DynamoDB cannot change an index's keys or projection; give the "
                    "new one another name (then delete the old when nothing reads it), or "
                    "pass --allow-destructive to delete and recreate it"
                )
    for name, found in sorted(live.indexes.items()):
        if name not in wanted:
            if allow_destructive:
                plan.deletes.append(IndexStep("delete", found.index))
            else:
                plan.notes.append(
                    f"index {name} is not in the spec: kept (--allow-destructive deletes it)"
                )


def _setting_steps(target: Target, live: LiveTable, allow_destructive: bool, plan: Plan) -> None:
    table = target.table
    if live.ttl_attribute != table.ttl_attribute:
        plan.steps.append(SettingStep("ttl", table.ttl_attribute))
    wanted = table.point_in_time_recovery
    if live.point_in_time_recovery is None:
        if wanted:
            plan.notes.append(
                "the spec asks for point-in-time recovery, which this store has not: back it "
                "up by copying its file"
            )
    elif live.point_in_time_recovery != wanted:
        plan.steps.append(SettingStep("point_in_time_recovery", wanted))
    _stream_step(table.stream, live.stream, allow_destructive, plan)


def _stream_step(
    wanted: StreamView | None, live: StreamView | None, allow_destructive: bool, plan: Plan
) -> None:
    """Turn on a stream the spec gained; turning one off or changing its view ends the
    stream its readers follow, so only with --allow-destructive."""
    if wanted == live:
        return
    if live is None or allow_destructive:
        plan.steps.append(SettingStep("stream", wanted))
    else:
        what = "off" if wanted is None else f"to {wanted}"
        plan.notes.append(
            f"the table's change stream ({live}) is kept: turning it {what} ends the stream "
            "its readers follow (--allow-destructive does it)"
        )


async def make_plan(
    target: Target,
    store: Store,
    admin: TableAdmin,
    store_kind: str,
    tenant: str | None = None,
    allow_destructive: bool = False,
    rate: float | None = None,
) -> Plan:
    """The plan that brings the live table and its items (the tenant's, when given) to the
    target; reads everything, writes nothing."""
    started = time.perf_counter()
    plan = Plan(target.table.name, store_kind, target.fingerprint, tenant)
    plan.rate = rate or NOMINAL_RATE.get(store_kind, NOMINAL_RATE["dynamodb"])
    live = admin.describe()
    if live is None:
        plan.create_table = True
        plan.seconds = time.perf_counter() - started
        return plan
    _index_steps(target, live, allow_destructive, plan)
    _setting_steps(target, live, allow_destructive, plan)
    refusals: dict[str, list[str]] = {}
    async for items, _ in scan_items(store, target, tenant):
        plan.scanned += len(items)
        for item in items:
            _count(target, item, plan, refusals)
    for kind, examples in refusals.items():
        plan.refused.append(f"{kind}: " + "; ".join(examples[:EXAMPLES]))
    if any(kind.startswith("primary key") for kind in refusals):
        plan.refused.append(PRIMARY_KEY_PROCEDURE)
    plan.seconds = time.perf_counter() - started
    return plan


def _count(target: Target, item: Item, plan: Plan, refusals: dict[str, list[str]]) -> None:
    try:
        verdict = judge(target, item)
    except PrimaryKeyChanged as exc:
        refusals.setdefault(f"primary key of {exc.entity} changes", []).append(str(exc))
        return
    except Unreadable as exc:
        refusals.setdefault(f"{exc.entity} items the spec cannot read", []).append(str(exc))
        return
    if verdict.entity is None:
        kind = str(item.get("_type", "no _type"))
        plan.other_items[kind] = plan.other_items.get(kind, 0) + 1
        return
    count = plan.backfill.setdefault(verdict.entity, EntityCount())
    count.items += 1
    if verdict.update is not None:
        count.to_update += 1
        count.attributes.update(verdict.changed)
        size = len(orjson.dumps(item, default=str))
        count.write_units += max(1, math.ceil(size / 1024))

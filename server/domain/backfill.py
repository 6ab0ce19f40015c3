"""Bringing users stored before they kept their group ids up to date: each such user gets
the ids of its memberships, written conditionally on the user being unchanged since read
(a user changed meanwhile keeps its ids its own way, or is done by the next run). Users
read their groups from their memberships until then, so the backfill may run while the
server serves. Idempotent: a second run writes nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from generated.entities import ENTITIES
from generated.models.user import User
from generated.table import TABLE
from keygraph.errors import ConditionFailed
from keygraph.migrate.plan import scan_items
from keygraph.migrate.target import load_target
from keygraph.plan import Condition, Update
from keygraph.store import Session
from server.domain.groups import group_ids_of
from server.domain.tx import version_is

LACKING = (Condition(op="not_exists", attribute="group_ids"),)


@dataclass
class BackfillReport:
    users: int = 0
    """Users read."""
    written: int = 0
    """Users given their group ids."""
    changed: int = 0
    """Users that changed between read and write: the next run sees them again."""

    def __str__(self) -> str:
        return (
            f"{self.users:,} users read, {self.written:,} given their group ids, "
            f"{self.changed:,} changed meanwhile (run again for them)"
        )


async def backfill_group_ids(
    s: Session, tenant: str | None, on_page: Callable[[int], object] = lambda _: None
) -> BackfillReport:
    """Gives every user of the tenant (of the table, when None) that lacks them its group
    ids; `on_page` is told how many items each page read held."""
    report = BackfillReport()
    users = ENTITIES[User.TYPE]
    async for items, _ in scan_items(s.store, load_target("generated"), tenant):
        on_page(len(items))
        for item in items:
            if item.get("_type") != User.TYPE:
                continue
            report.users += 1
            if "group_ids" in item:
                continue
            user = User.from_item(item)
            owner = users.tenant_of(item)
            assert owner is not None  # users are kept per tenant
            group_ids = await group_ids_of(s, owner, user)
            update = Update(
                key=TABLE.primary_key(item),
                set={"group_ids": group_ids},
                conditions=(*version_is(user.version), *LACKING),
            )
            try:
                await s.store.update(update)
            except ConditionFailed:
                report.changed += 1
                continue
            report.written += 1
    return report

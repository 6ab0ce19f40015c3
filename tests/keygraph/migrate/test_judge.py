"""What the migration writes for one item, on this repo's spec: an attribute the spec gained
with a default (a group's version) is written to items stored before it."""

from __future__ import annotations

from datetime import UTC, datetime

from generated import entities
from generated.models.group import Group
from generated.table import TABLE
from keygraph.migrate.backfill import judge
from keygraph.migrate.target import Target
from keygraph.plan import Condition

TARGET = Target(TABLE, entities.ENTITIES, entities.FINGERPRINT, entities.TENANT_PREFIXES)


def test_an_item_from_before_its_version_gets_one() -> None:
    group = Group(group_id="01ARZ3NDEKTSV4RRFFQ69G5FAV", name="Old", created_at=datetime.now(UTC))
    stored = {k: v for k, v in group.to_item("acme").items() if k != "version"}
    verdict = judge(TARGET, stored)
    assert verdict.update is not None
    assert dict(verdict.update.set) == {"version": 1}
    assert Condition("not_exists", "version") in verdict.update.conditions
    assert Condition("equals", "name", "Old") in verdict.update.conditions
    assert judge(TARGET, group.to_item("acme")).update is None  # stored as the spec stores it

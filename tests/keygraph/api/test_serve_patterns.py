"""The store calls' patterns (keygraph/serve/patterns.py) of this repository's spec, as
`serve` names them: every read plan the generated code builds by its own pattern, writes by
the entity they address, keys no template makes `other`."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from generated.keys import group as group_keys
from generated.keys import membership as membership_keys
from generated.keys import org_node as org_node_keys
from generated.keys import user as user_keys
from generated.models.enums import OrderStatus
from generated.queries import (
    address,
    cleanup_task,
    email_claim,
    group,
    idempotency_record,
    membership,
    order,
    org_node,
    org_roots,
    shop,
    user,
    user_order,
)
from keygraph.plan import BatchGet, Delete, Get, Put, Query, Scan, Update
from keygraph.serve.patterns import OTHER, SCAN, Patterns
from server.compiled import SPEC

T = "acme"
WHEN = datetime(2024, 1, 2, tzinfo=UTC)
READS = {
    "get_user": user.plan_get_user(T, "u1"),
    "get_users": BatchGet(tuple(user.plan_get_users(T, ["u1", "u2"]))),
    "get_email_claim": email_claim.plan_get_email_claim(T, "k1"),
    "list_users": user.plan_list_users(T, limit=5),
    "user_orders": user_order.plan_user_orders(T, "u1", limit=5),
    "user_orders_between": user_order.plan_user_orders_between(T, "u1", WHEN, WHEN, limit=5),
    "get_order": order.plan_get_order(T, "o1"),
    "get_orders": BatchGet(tuple(order.plan_get_orders(T, ["o1"]))),
    "orders_by_status": order.plan_orders_by_status(T, OrderStatus.PAID, limit=5),
    "get_group": group.plan_get_group(T, "g1"),
    "get_groups": BatchGet(tuple(group.plan_get_groups(T, ["g1"]))),
    "get_membership": membership.plan_get_membership(T, "u1", "g1"),
    "user_groups": membership.plan_user_groups(T, "u1", limit=5),
    "group_members": membership.plan_group_members(T, "g1", limit=5),
    "get_org_node": org_node.plan_get_org_node(T, ["r", "a", "b"]),
    "get_org_nodes": BatchGet(tuple(org_node.plan_get_org_nodes(T, [["r"], ["r", "a"]]))),
    "get_org_roots": org_roots.plan_get_org_roots(T),
    "org_children": org_node.plan_org_children(T, "r", limit=5),
    "org_root_nodes": org_node.plan_org_root_nodes(T, limit=5),
    "org_subtree": org_node.plan_org_subtree(T, ["r", "a"], limit=5),
    "get_shop": shop.plan_get_shop(T, "s1"),
    "get_shops": BatchGet(tuple(shop.plan_get_shops(T, ["s1"]))),
    "shops_in_cell": shop.plan_shops_in_cell(T, "u09", "u09t", "u09v~", limit=5),
    "user_with_addresses": user.plan_user_with_addresses(T, "u1", limit=5),
    "get_address": address.plan_get_address(T, "u1", "a1"),
    "get_idempotency_record": idempotency_record.plan_get_idempotency_record(T, "k"),
    "cleanup_tasks": cleanup_task.plan_cleanup_tasks(limit=5),
}
PATTERNS = Patterns.load(SPEC)


@pytest.mark.parametrize("name", sorted(READS))
def test_each_read_is_named_by_its_pattern(name: str) -> None:
    assert PATTERNS.of(READS[name]) == name


def test_every_pattern_of_the_spec_is_covered() -> None:
    import tomllib

    assert set(tomllib.loads(SPEC.read_text())["patterns"]) == set(READS)


def test_writes_are_named_by_their_entity() -> None:
    assert PATTERNS.of(Update(user_keys.key(T, "u1"))) == "User"
    assert PATTERNS.of(Delete(group_keys.key(T, "g1"))) == "Group"
    assert PATTERNS.of(Put({**membership_keys.key(T, "u1", "g1"), "x": 1})) == "Membership"
    assert PATTERNS.of(Delete(org_node_keys.key(T, ["r", "a", "b", "c"]))) == "OrgNode"


def test_anything_else_is_other() -> None:
    assert PATTERNS.of(Get({"PK": "KEYGRAPH#READY", "SK": "PROBE"})) == OTHER
    assert PATTERNS.of(Query(partition="T#acme#NOTHING")) == OTHER
    assert PATTERNS.of(BatchGet(())) == OTHER
    assert PATTERNS.of(Scan()) == SCAN

"""schema.graphql is the schema served, printed by `python -m server schema`: it must not
drift, it carries the contract's names (DESIGN §6), and it departs from the hand-written
server's schema only where docs/contract.md says."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphql import build_schema, find_breaking_changes

from server.api import sdl
from server.cli import main

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema.graphql"


def test_schema_file_matches_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert SCHEMA_FILE.read_text() == capsys.readouterr().out, (
        "schema.graphql is stale: run `python -m server schema > schema.graphql`"
    )


def test_what_would_break_a_client_of_the_hand_written_server_is_listed() -> None:
    served = build_schema(SCHEMA_FILE.read_text())
    changes = find_breaking_changes(build_schema(sdl()), served)
    # docs/contract.md, "The read API compiled from the spec"
    assert sorted(change.description for change in changes) == [
        "Field Order.totalCents changed type from Int to Long!.",
        "Field User.groups changed type from GroupConnection! to GroupConnection.",
    ]


def test_schema_has_the_contract_fields() -> None:
    schema = build_schema(SCHEMA_FILE.read_text())
    query, mutation = schema.query_type, schema.mutation_type
    assert query is not None
    assert mutation is not None
    assert {
        "node",
        "viewer",
        "user",
        "userByEmail",
        "users",
        "order",
        "ordersByStatus",
        "group",
        "orgNode",
        "orgRoots",
        "shop",
        "shopsNear",
    } <= set(query.fields)
    assert {
        "createUser",
        "updateUser",
        "createOrder",
        "updateOrderStatus",
        "createGroup",
        "addGroupMember",
        "removeGroupMember",
        "createOrgNode",
        "createShop",
    } <= set(mutation.fields)
    user = schema.get_type("User")
    assert {"id", "email", "name", "createdAt", "version", "orders", "groups"} <= set(
        user.fields  # type: ignore[union-attr]
    )
    orders = user.fields["orders"]  # type: ignore[union-attr]
    assert set(orders.args) == {"first", "after", "from", "to"}
    order = schema.get_type("Order")
    assert {
        "id",
        "user",
        "status",
        "totalCents",
        "currency",
        "createdAt",
        "version",
        "items",
    } <= set(
        order.fields  # type: ignore[union-attr]
    )
    for node_type in ("User", "Order", "Group", "OrgNode", "Shop"):
        assert [i.name for i in schema.get_type(node_type).interfaces] == ["Node"]  # type: ignore[union-attr]

"""schema.graphql is the schema served, the compiled API's (the generated package's with
server/extension/) printed by `python -m server schema`: it must not drift, and it carries
the contract's names (DESIGN §6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphql import build_schema, print_schema

from server.cli import main
from tests.api_schema import SCHEMA

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema.graphql"


def test_schema_file_matches_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    printed = capsys.readouterr().out
    assert printed == print_schema(SCHEMA) + "\n"
    assert SCHEMA_FILE.read_text() == printed, (
        "schema.graphql is stale: run `python -m server schema > schema.graphql`"
    )


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

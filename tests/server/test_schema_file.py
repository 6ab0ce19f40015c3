"""schema.graphql is the schema exported from the code; it must not drift, and it carries
the contract's names (DESIGN §6)."""

from __future__ import annotations

from pathlib import Path

from graphql import build_schema

from server.api import sdl

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema.graphql"


def test_schema_file_matches_the_code() -> None:
    assert SCHEMA_FILE.read_text() == sdl(), (
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

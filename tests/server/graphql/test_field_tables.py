"""The schema's assembly fails, naming the field and the table, when a field lacks its cost
bound (server/graphql/cost.py) or its guard (server/authz/fields.py), or when an entry
names a field the schema does not have (server/graphql/tables.py)."""

from __future__ import annotations

from types import ModuleType

import graphql
import pytest

from keygraph.paging import PageSize
from keygraph.store import Store
from server.api import build_schema, sdl
from server.authz import fields
from server.edge.app import create_app
from server.graphql import cost
from server.graphql.tables import FieldTablesError, problems
from server.settings import Limits, Settings

SERVED = build_schema(Limits())._schema
SDL = sdl()

REMOVED = [
    (cost, "CONNECTION_PAGES", ("User", "orders")),
    (cost, "CONNECTION_PAGES", ("User", "groups")),
    (cost, "FIRST_LISTS", ("OrgNode", "children")),
    (cost, "LIST_BOUNDS", ("User", "addresses")),
    (fields, "FIELD_GUARDS", ("User", "orders")),
    (fields, "FIELD_GUARDS", ("Query", "order")),
    (fields, "UNGUARDED", ("Query", "viewer")),
]


def _without(module: ModuleType, table: str, where: tuple[str, str]) -> dict[object, object]:
    entries = dict(getattr(module, table))
    del entries[where]
    return entries


def test_the_served_schema_has_every_entry_and_no_stale_one() -> None:
    assert problems(SERVED) == []


@pytest.mark.parametrize(("module", "table", "where"), REMOVED)
def test_the_app_does_not_start_without_an_entry(
    monkeypatch: pytest.MonkeyPatch,
    settings: Settings,
    store: Store,
    module: ModuleType,
    table: str,
    where: tuple[str, str],
) -> None:
    monkeypatch.setattr(module, table, _without(module, table, where))
    with pytest.raises(FieldTablesError) as raised:
        create_app(settings, store)
    lines = str(raised.value).splitlines()[1:]
    assert len(lines) == 1
    assert lines[0].startswith(f"  {where[0]}.{where[1]}: ")
    assert table in lines[0] or table == "UNGUARDED"  # viewer's line names FIELD_GUARDS


@pytest.mark.parametrize(
    ("module", "table"),
    [(cost, "CONNECTION_PAGES"), (cost, "LIST_BOUNDS"), (fields, "FIELD_GUARDS")],
)
def test_an_entry_for_no_field_of_the_schema_is_stale(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, table: str
) -> None:
    entries = dict(getattr(module, table))
    entries[("User", "ordersLegacy")] = next(iter(entries.values()))
    monkeypatch.setattr(module, table, entries)
    with pytest.raises(FieldTablesError, match=rf"User\.ordersLegacy: stale entry in {table}"):
        build_schema(Limits())


def test_a_new_field_is_named_with_each_table_it_misses() -> None:
    extended = graphql.build_schema(
        SDL
        + """
        extend type User {
          ordersInStatus(status: OrderStatus!, first: Int, after: String): OrderConnection
        }
        extend type Query { shopByName(name: String!): Shop }
        extend type Order { lines: [OrderItem!]! }
        """
    )
    assert problems(extended) == [
        "Order.lines: no cost bound in LIST_BOUNDS (server/graphql/cost.py)",
        "Query.shopByName: reads a pattern, no guard in FIELD_GUARDS (server/authz/fields.py)",
        "User.ordersInStatus: no cost bound in CONNECTION_PAGES (server/graphql/cost.py)",
        "User.ordersInStatus: reads a pattern, no guard in FIELD_GUARDS (server/authz/fields.py)",
    ]


def test_an_entry_in_the_wrong_table_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    orders = ("User", "orders")
    monkeypatch.setattr(cost, "CONNECTION_PAGES", _without(cost, "CONNECTION_PAGES", orders))
    wrong = {("Order", "user"): PageSize(1, 1), orders: PageSize(20, 100)}
    monkeypatch.setattr(cost, "FIRST_LISTS", {**cost.FIRST_LISTS, **wrong})
    assert problems(SERVED) == [
        "Order.user: in FIRST_LISTS (server/graphql/cost.py), not a list or connection",
        "User.orders: in FIRST_LISTS (server/graphql/cost.py), belongs in CONNECTION_PAGES",
        "User.orders: no cost bound in CONNECTION_PAGES (server/graphql/cost.py)",
    ]

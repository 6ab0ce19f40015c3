"""Orders end to end: create with items, read by id, per user (newest first, date ranges),
by status, and status changes with optimistic locking."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

import httpx

from generated.keys import order as order_keys
from generated.table import TABLE
from keygraph.plan import Query, Update
from keygraph.stores.embedded.store import EmbeddedStore
from server.settings import Settings
from tests.ids import local_id
from tests.server.conftest import ORDER_FIELDS, Api, app_of, store_counts

ORDER = f"query($id: ID!) {{ order(id: $id) {{ {ORDER_FIELDS} }} }}"
USER_ORDERS = """query($id: ID!, $first: Int, $after: String, $from: DateTime, $to: DateTime) {
  user(id: $id) { orders(first: $first, after: $after, from: $from, to: $to) {
    edges { node { id status version createdAt } } pageInfo { hasNextPage endCursor } } } }"""
BY_STATUS = """query($s: OrderStatus!, $first: Int, $after: String) {
  ordersByStatus(status: $s, first: $first, after: $after) {
    edges { node { id status } } pageInfo { hasNextPage endCursor } } }"""
SET_STATUS = """mutation($id: ID!, $s: OrderStatus!, $v: Int!) {
  updateOrderStatus(input: {id: $id, status: $s, expectedVersion: $v}) { id status version } }"""
CREATE = "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }"


def _lines(count: int) -> list[dict[str, Any]]:
    return [
        {"sku": f"S{i}", "name": f"item {i}", "quantity": 1, "unitPriceCents": 100}
        for i in range(count)
    ]


async def _orders_of(api: Api, user_id: str, **args: object) -> list[dict[str, object]]:
    data = await api.data(USER_ORDERS, {"id": user_id, **args})
    return [edge["node"] for edge in data["user"]["orders"]["edges"]]


async def test_create_order_computes_the_total_and_starts_pending(acme: Api) -> None:
    user = await acme.create_user("a@example.org")
    order = await acme.create_order(user["id"], [("TEA", 3, 250), ("MUG", 1, 1299)], "USD")
    assert order["status"] == "PENDING"
    assert order["totalCents"] == 3 * 250 + 1299
    assert order["currency"] == "USD"
    assert order["version"] == 1
    assert order["user"] == {"id": user["id"]}
    assert [(i["sku"], i["quantity"], i["unitPriceCents"]) for i in order["items"]] == [
        ("TEA", 3, 250),
        ("MUG", 1, 1299),
    ]
    assert (await acme.data(ORDER, {"id": order["id"]}))["order"] == order


async def test_order_by_id_is_one_store_call_with_its_items(acme: Api) -> None:
    user = await acme.create_user("b@example.org")
    order = await acme.create_order(user["id"], [(f"S{i}", 1, 1) for i in range(50)])
    body = await acme("query($id: ID!) { order(id: $id) { items { sku } } }", {"id": order["id"]})
    assert len(body["data"]["order"]["items"]) == 50
    assert store_counts(body) == {"storeCalls": 1, "storeWaves": 1}


async def test_invalid_orders_are_bad_user_input_and_write_nothing(acme: Api) -> None:
    user = await acme.create_user("c@example.org")
    bad_inputs: list[dict[str, Any]] = [
        {"currency": "EUR", "items": []},
        {"currency": "EUR", "items": _lines(51)},
        {"currency": "eur", "items": _lines(1)},
        {"currency": "EUR", "items": [{**_lines(1)[0], "quantity": 0}]},
        {"currency": "EUR", "items": [{**_lines(1)[0], "unitPriceCents": -1}]},
        {"currency": "EUR", "items": [{**_lines(1)[0], "sku": ""}]},
    ]
    for bad in bad_inputs:
        assert await acme.codes(CREATE, {"i": {"userId": user["id"], **bad}}) == [
            "BAD_USER_INPUT"
        ], bad
    assert await _orders_of(acme, user["id"]) == []
    assert (await acme.data(BY_STATUS, {"s": "PENDING"}))["ordersByStatus"]["edges"] == []


async def test_order_for_a_missing_user_is_not_found(acme: Api) -> None:
    missing = base64.urlsafe_b64encode(b"User:01ARZ3NDEKTSV4RRFFQ69G5FAV").decode().rstrip("=")
    variables = {"i": {"userId": missing, "currency": "EUR", "items": _lines(1)}}
    assert await acme.codes(CREATE, variables) == ["NOT_FOUND"]
    assert (await acme.data(BY_STATUS, {"s": "PENDING"}))["ordersByStatus"]["edges"] == []


async def test_user_orders_are_newest_first_and_page(acme: Api) -> None:
    user = await acme.create_user("d@example.org")
    created = [(await acme.create_order(user["id"], [("X", 1, i)]))["id"] for i in range(5)]
    assert [o["id"] for o in await _orders_of(acme, user["id"])] == created[::-1]
    first = await acme.data(USER_ORDERS, {"id": user["id"], "first": 3})
    page = first["user"]["orders"]
    assert page["pageInfo"]["hasNextPage"] is True
    rest = await _orders_of(acme, user["id"], first=3, after=page["pageInfo"]["endCursor"])
    assert [e["node"]["id"] for e in page["edges"]] + [o["id"] for o in rest] == created[::-1]


async def test_user_orders_between_from_inclusive_and_to_exclusive(acme: Api) -> None:
    user = await acme.create_user("e@example.org")
    for i in range(4):
        await acme.create_order(user["id"], [("X", 1, i)])
    orders = await _orders_of(acme, user["id"])  # newest first
    times = [str(o["createdAt"]) for o in orders]
    assert times == sorted(times, reverse=True)
    # [times[2], times[0]) holds the orders created at times[2] and times[1]
    window = await _orders_of(acme, user["id"], **{"from": times[2], "to": times[0]})
    assert [o["id"] for o in window] == [orders[1]["id"], orders[2]["id"]]
    since = await _orders_of(acme, user["id"], **{"from": times[1]})
    assert [o["id"] for o in since] == [orders[0]["id"], orders[1]["id"]]
    before = await _orders_of(acme, user["id"], to=times[1])
    assert [o["id"] for o in before] == [orders[2]["id"], orders[3]["id"]]
    assert await _orders_of(acme, user["id"], **{"from": times[0], "to": times[0]}) == []


async def test_from_after_to_is_bad_user_input(acme: Api) -> None:
    user = await acme.create_user("f@example.org")
    variables = {"id": user["id"], "from": "2024-02-01T00:00:00Z", "to": "2024-01-01T00:00:00Z"}
    assert await acme.codes(USER_ORDERS, variables) == ["BAD_USER_INPUT"]


async def test_status_change_updates_both_copies_and_the_status_index(acme: Api) -> None:
    user = await acme.create_user("g@example.org")
    order = await acme.create_order(user["id"], [("X", 1, 1)])
    other = await acme.create_order(user["id"], [("Y", 1, 1)])
    changed = await acme.data(SET_STATUS, {"id": order["id"], "s": "PAID", "v": 1})
    assert changed["updateOrderStatus"] == {"id": order["id"], "status": "PAID", "version": 2}
    by_id = (await acme.data(ORDER, {"id": order["id"]}))["order"]
    assert (by_id["status"], by_id["version"]) == ("PAID", 2)
    users_copy = {o["id"]: o for o in await _orders_of(acme, user["id"])}
    assert (users_copy[order["id"]]["status"], users_copy[order["id"]]["version"]) == ("PAID", 2)
    paid = (await acme.data(BY_STATUS, {"s": "PAID"}))["ordersByStatus"]["edges"]
    pending = (await acme.data(BY_STATUS, {"s": "PENDING"}))["ordersByStatus"]["edges"]
    assert [e["node"]["id"] for e in paid] == [order["id"]]
    assert [e["node"]["id"] for e in pending] == [other["id"]]


async def test_stale_status_change_is_conflict_and_changes_nothing(acme: Api) -> None:
    user = await acme.create_user("h@example.org")
    order = await acme.create_order(user["id"], [("X", 1, 1)])
    await acme.data(SET_STATUS, {"id": order["id"], "s": "PAID", "v": 1})
    assert await acme.codes(SET_STATUS, {"id": order["id"], "s": "CANCELLED", "v": 1}) == [
        "CONFLICT"
    ]
    by_id = (await acme.data(ORDER, {"id": order["id"]}))["order"]
    assert (by_id["status"], by_id["version"]) == ("PAID", 2)
    assert (await acme.data(BY_STATUS, {"s": "CANCELLED"}))["ordersByStatus"]["edges"] == []


async def test_status_change_of_a_missing_order_is_not_found(acme: Api) -> None:
    user = await acme.create_user("i@example.org")
    for order_id in (user["id"], base64.urlsafe_b64encode(b"Order:nope").decode().rstrip("=")):
        assert await acme.codes(SET_STATUS, {"id": order_id, "s": "PAID", "v": 1}) == ["NOT_FOUND"]


async def test_orders_by_status_newest_first_and_paged(acme: Api) -> None:
    user = await acme.create_user("j@example.org")
    created = [(await acme.create_order(user["id"], [("X", 1, i)]))["id"] for i in range(3)]
    first = (await acme.data(BY_STATUS, {"s": "PENDING", "first": 2}))["ordersByStatus"]
    assert first["pageInfo"]["hasNextPage"] is True
    second = await acme.data(
        BY_STATUS, {"s": "PENDING", "first": 2, "after": first["pageInfo"]["endCursor"]}
    )
    ids = [e["node"]["id"] for e in first["edges"] + second["ordersByStatus"]["edges"]]
    assert ids == created[::-1]


async def test_order_created_at_is_an_iso_datetime_with_zone(acme: Api) -> None:
    user = await acme.create_user("k@example.org")
    order = await acme.create_order(user["id"], [("X", 1, 1)])
    assert datetime.fromisoformat(order["createdAt"]).utcoffset() is not None


INT_MAX = 2**31 - 1
"""The largest GraphQL Int: no total or line may exceed it."""
BIG = 100_000_000
"""The largest unit price."""


async def test_a_total_beyond_a_graphql_int_is_refused_and_writes_nothing(acme: Api) -> None:
    user = await acme.create_user("big@example.org")
    line = {"sku": "GOLD", "name": "gold", "quantity": 22, "unitPriceCents": BIG}
    body = await acme(CREATE, {"i": {"userId": user["id"], "currency": "EUR", "items": [line]}})
    assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]
    assert "2147483647" in body["errors"][0]["message"]
    several = [{**line, "sku": f"G{i}", "quantity": 11} for i in range(2)]  # each line fits
    body = await acme(CREATE, {"i": {"userId": user["id"], "currency": "EUR", "items": several}})
    assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]
    assert await _orders_of(acme, user["id"]) == []
    rest = INT_MAX - 21 * BIG
    largest = [{**line, "quantity": 21}, {**line, "quantity": 1, "unitPriceCents": rest}]
    order = await acme.data(
        "mutation($i: CreateOrderInput!) { createOrder(input: $i) { totalCents } }",
        {"i": {"userId": user["id"], "currency": "EUR", "items": largest}},
    )
    assert order["createOrder"]["totalCents"] == INT_MAX


async def test_a_total_stored_beyond_an_int_reads_as_the_number(
    settings: Settings, store: EmbeddedStore, acme_token: str
) -> None:
    """As stored before totals were bounded: the order and the lists that hold it answer
    with that total, a Long (docs/contract.md)."""
    app = app_of(settings, store)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        api = Api(c, acme_token)
        user = await api.create_user("stored@example.org")
        fine = await api.create_order(user["id"], [("A", 1, 5)])
        bad = await api.create_order(user["id"], [("B", 1, 7)])
        user_key = f"T#acme#USER#{local_id(user['id'], 'User')}"
        copies = await store.query(Query(user_key, consistent=True))
        bad_id = local_id(bad["id"], "Order")
        keys = [order_keys.key("acme", bad_id)] + [
            TABLE.primary_key(item) for item in copies.items if item.get("order_id") == bad_id
        ]
        for key in keys:
            await store.update(Update(key, set={"total_cents": 22 * BIG}))
        node = "edges { node { id totalCents } }"
        of_user = f'user(id: "{user["id"]}")'
        reads = {
            ("ordersByStatus", "edges"): f"{{ ordersByStatus(status: PENDING) {{ {node} }} }}",
            ("user", "orders", "edges"): f"{{ {of_user} {{ orders {{ {node} }} }} }}",
        }
        for path, query in reads.items():
            body = await api(query)
            data: Any = body["data"]
            for step in path:
                data = data[step]
            assert [edge["node"] for edge in data] == [
                {"id": bad["id"], "totalCents": 22 * BIG},
                {"id": fine["id"], "totalCents": 5},
            ]
            assert "errors" not in body, body["errors"]
        order = await api.data(f'{{ order(id: "{bad["id"]}") {{ id totalCents }} }}')
        assert order == {"order": {"id": bad["id"], "totalCents": 22 * BIG}}

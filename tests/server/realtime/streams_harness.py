"""What the per-field tests on each store's own change stream share: a subscriber over
graphql-transport-ws that reads a field's events as data (each cursor checked and kept
apart), waits on the app's stream reader; the fields' selections, and mutations the fields'
tests make."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from httpx_ws import AsyncWebSocketSession

from generated.api import API
from generated.models.order import Order as OrderModel
from generated.models.order_item import OrderItem
from generated.queries.order import get_order
from keygraph.cursor import CursorCodec
from keygraph.plan import Put
from keygraph.store import Session, Store
from server.domain.orders import new_order_items
from tests.ids import local_id, to_global_id
from tests.server.conftest import Api
from tests.server.realtime.conftest import Connect, settle, subscribe
from tests.server.realtime.reader_watch import ReaderWatch
from tests.server.realtime.test_fields import event, nothing_more

ORDERS = """subscription($u: ID!, $after: String) {
  orderChanged(userId: $u, after: $after) {
    change cursor
    order {
      id status totalCents currency version
      items { sku name quantity unitPriceCents } user { name }
    }
  }
}"""
USER = """subscription($id: ID!, $after: String) {
  userChanged(id: $id, after: $after) { change cursor user { id name email version } }
}"""
MEMBERS = """subscription($g: ID!, $after: String) {
  groupMembersChanged(groupId: $g, after: $after) { change cursor groupId userId user { name } }
}"""
ORG = """subscription($id: ID!, $after: String) {
  orgNodeChanged(id: $id, after: $after) { change cursor node { id name depth version } }
}"""


def _path_separator() -> str:
    """What joins an org node's path in its id, as the spec declares it."""
    (path,) = API.roots["orgNode"].args
    assert path.separator is not None
    return path.separator


PATH_SEPARATOR = _path_separator()


class Subscriber:
    """One subscription to `field` on its own connection: its events' data without their
    cursors, the cursors in `cursors` (every one distinct), in the order sent."""

    def __init__(self, ws: AsyncWebSocketSession, field: str, watch: ReaderWatch) -> None:
        self.ws = ws
        self.field = field
        self.watch = watch
        self.cursors: list[str] = []

    async def start(self, query: str, variables: dict[str, Any], caught_up: bool) -> None:
        """Subscribes; with `caught_up`, once the reader has read every write so far (so
        none of them is sent live)."""
        if caught_up:
            await self.watch.caught_up()
        await subscribe(self.ws, "1", query, variables)
        await settle()

    async def next(self) -> dict[str, Any]:
        data, errors = await self.next_with_errors()
        assert not errors, errors
        return data

    async def next_with_errors(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The next event and the errors sent with it."""
        payload = await event(self.ws)
        data: dict[str, Any] = dict(payload["data"][self.field])
        cursor = data.pop("cursor")
        assert isinstance(cursor, str)
        assert cursor not in self.cursors
        self.cursors.append(cursor)
        return data, list(payload.get("errors", []))

    async def take(self, count: int) -> list[dict[str, Any]]:
        """The next `count` events, in the order sent."""
        return [await self.next() for _ in range(count)]

    async def nothing_more(self) -> None:
        """Every write so far has been read, and none sent more than was taken."""
        await self.watch.caught_up()
        await settle()
        await nothing_more(self.ws)


@contextlib.asynccontextmanager
async def subscribed(
    connect: Connect,
    api: Api,
    watch: ReaderWatch,
    field: str,
    query: str,
    variables: dict[str, Any],
    *,
    caught_up: bool = True,
) -> AsyncIterator[Subscriber]:
    """A Subscriber on a new connection as `api`'s caller, subscribed (see `start`)."""
    async with connect(api.token) as ws:
        sub = Subscriber(ws, field, watch)
        await sub.start(query, variables, caught_up)
        yield sub


def unordered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of one transaction in a fixed order, to compare as a multiset: a stream
    orders a transaction's items as it likes."""
    return sorted(events, key=repr)


def session(store: Store) -> Session:
    return Session(store, CursorCodec(b"k" * 32))


def line(sku: str, quantity: int, price: int) -> dict[str, Any]:
    return {"sku": sku, "name": f"{sku} item", "quantity": quantity, "unitPriceCents": price}


def order_view(
    order_id: str, status: str, version: int, *lines: dict[str, Any], owner: str = "Bob"
) -> dict[str, Any]:
    return {
        "id": order_id,
        "status": status,
        "totalCents": sum(item["quantity"] * item["unitPriceCents"] for item in lines),
        "currency": "EUR",
        "version": version,
        "items": list(lines),
        "user": {"name": owner},
    }


async def delete(api: Api, mutation: str, object_id: str, version: int) -> None:
    await api.data(
        f"mutation($i: DeleteInput!) {{ {mutation}(input: $i) {{ deletedId }} }}",
        {"i": {"id": object_id, "expectedVersion": version}},
    )


async def replace_second_line(store: Store, order_id: str, new: OrderItem) -> None:
    """What a script correcting an order's lines writes, straight to the store: both copies
    of the order, its total and version updated."""
    model = await get_order(session(store), "acme", local_id(order_id, "Order"), consistent=True)
    assert isinstance(model, OrderModel)
    lines = [model.items[0], new]
    total = sum(item.quantity * item.unit_price_cents for item in lines)
    fixed = model.model_copy(
        update={"items": lines, "total_cents": total, "version": model.version + 1}
    )
    await store.transact_write([Put(item=item) for item in new_order_items("acme", fixed)])


async def rename_user(api: Api, user_id: str, version: int, name: str) -> None:
    await api.data(
        "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id } }",
        {"i": {"id": user_id, "expectedVersion": version, "name": name}},
    )


async def remove_member(api: Api, group_id: str, user_id: str) -> None:
    await api.data(
        "mutation($g: ID!, $u: ID!) { removeGroupMember(groupId: $g, userId: $u) { id } }",
        {"g": group_id, "u": user_id},
    )


async def move(api: Api, node_id: str, version: int, parent: str) -> str:
    data = await api.data(
        "mutation($i: MoveOrgNodeInput!) { moveOrgNode(input: $i) { node { id } } }",
        {"i": {"id": node_id, "expectedVersion": version, "newParentId": parent}},
    )
    moved: str = data["moveOrgNode"]["node"]["id"]
    return moved


async def delete_node(api: Api, node_id: str, version: int) -> None:
    await api.data(
        "mutation($i: DeleteOrgNodeInput!) { deleteOrgNode(input: $i) { deletedId } }",
        {"i": {"id": node_id, "expectedVersion": version}},
    )


def node_global_id(path: tuple[str, ...]) -> str:
    """The id of the org node at `path`."""
    return to_global_id("OrgNode", PATH_SEPARATOR.join(path))


def path_of(node_id: str) -> tuple[str, ...]:
    return tuple(local_id(node_id, "OrgNode").split(PATH_SEPARATOR))


def below(parent_id: str, node_id: str) -> str:
    """The id of the node `node_id` once moved below `parent_id`."""
    return node_global_id((*path_of(parent_id), path_of(node_id)[-1]))


def node(change: str, node_id: str, name: str, version: int) -> dict[str, Any]:
    depth = len(path_of(node_id)) - 1
    return {
        "change": change,
        "node": {"id": node_id, "name": name, "depth": depth, "version": version},
    }

"""Each subscription field's events, as a mutation over HTTP makes them: the change, the
object with the subscriber's selection, authorization when subscribing and per field, and
a cursor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from httpx_ws import AsyncWebSocketSession

from tests.ids import local_id
from tests.server.conftest import Api
from tests.server.realtime.conftest import Connect, Sockets, receive, settle, subscribe

ORDERS = """subscription($u: ID!, $after: String) {
  orderChanged(userId: $u, after: $after) {
    change cursor order { id status totalCents items { sku quantity } user { name } }
  }
}"""
USER = """subscription($id: ID!) {
  userChanged(id: $id) { change cursor user { id name email } }
}"""
MEMBERS = """subscription($g: ID!) {
  groupMembersChanged(groupId: $g) { change cursor userId user { name } }
}"""
ORG = """subscription($id: ID!) {
  orgNodeChanged(id: $id) { change cursor node { id name depth } }
}"""


async def event(ws: AsyncWebSocketSession, op_id: str = "1") -> dict[str, Any]:
    message = await receive(ws)
    assert message["type"] == "next", message
    assert message["id"] == op_id
    payload: dict[str, Any] = message["payload"]
    return payload


async def nothing_more(ws: AsyncWebSocketSession) -> None:
    """No message arrives on `ws` (a ping is answered first)."""
    await ws.send_json({"type": "ping"})
    assert await receive(ws) == {"type": "pong"}


async def update_status(api: Api, order: dict[str, Any], status: str) -> dict[str, Any]:
    data = await api.data(
        "mutation($i: UpdateOrderStatusInput!) { updateOrderStatus(input: $i) { id version } }",
        {"i": {"id": order["id"], "status": status, "expectedVersion": order["version"]}},
    )
    updated: dict[str, Any] = data["updateOrderStatus"]
    return updated


async def test_order_changes_reach_the_owner_with_its_selection(
    connect: Connect, acme: Api, member_token: Callable[[str], str]
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    async with connect(member_token(local_id(bob["id"], "User"))) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await settle()
        order = await acme.create_order(bob["id"], [("A-1", 2, 150)])
        created = await event(ws)
        assert "errors" not in created
        change = created["data"]["orderChanged"]
        assert change["change"] == "CREATED"
        assert change["order"] == {
            "id": order["id"],
            "status": "PENDING",
            "totalCents": 300,
            "items": [{"sku": "A-1", "quantity": 2}],
            "user": {"name": "Bob"},
        }
        assert change["cursor"]
        await update_status(acme, order, "PAID")
        updated = (await event(ws))["data"]["orderChanged"]
        assert (updated["change"], updated["order"]["status"]) == ("UPDATED", "PAID")


async def test_a_member_subscribing_to_another_users_orders_is_forbidden(
    connect: Connect, acme: Api, member_token: Callable[[str], str]
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    carol = await acme.create_user("carol@acme.test", "Carol")
    async with connect(member_token(local_id(carol["id"], "User"))) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        message = await receive(ws)
        assert message["type"] == "error"
        assert message["payload"][0]["extensions"]["code"] == "FORBIDDEN"
        await acme.create_order(bob["id"], [("A-1", 1, 100)])
        await settle()
        await nothing_more(ws)


async def test_a_users_email_is_null_and_forbidden_for_another_member(
    sockets: Sockets, acme: Api, member_token: Callable[[str], str]
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    carol = await acme.create_user("carol@acme.test", "Carol")
    await settle()
    async with sockets() as open_session:
        own = await open_session(member_token(local_id(bob["id"], "User")))
        other = await open_session(member_token(local_id(carol["id"], "User")))
        for ws in (own, other):
            await subscribe(ws, "1", USER, {"id": bob["id"]})
        await settle()
        await acme.data(
            "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id } }",
            {"i": {"id": bob["id"], "expectedVersion": bob["version"], "name": "Robert"}},
        )
        mine = await event(own)
        assert mine["data"]["userChanged"]["user"] == {
            "id": bob["id"],
            "name": "Robert",
            "email": "bob@acme.test",
        }
        theirs = await event(other)
        assert theirs["data"]["userChanged"]["user"]["email"] is None
        assert theirs["data"]["userChanged"]["user"]["name"] == "Robert"
        (error,) = theirs["errors"]
        assert error["extensions"]["code"] == "FORBIDDEN"
        assert error["path"] == ["userChanged", "user", "email"]


async def create_node(api: Api, name: str, parent: str | None = None) -> dict[str, Any]:
    data = await api.data(
        "mutation($i: CreateOrgNodeInput!) { createOrgNode(input: $i) { id name version } }",
        {"i": {"name": name, "parentId": parent}},
    )
    node: dict[str, Any] = data["createOrgNode"]
    return node


async def test_org_node_changes_cover_its_subtree_moves_and_deletes(
    connect: Connect, acme: Api
) -> None:
    root = await create_node(acme, "Root")
    other = await create_node(acme, "Other")
    await settle()
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORG, {"id": root["id"]})
        await settle()
        team = await create_node(acme, "Team", root["id"])
        created = [(await event(ws))["data"]["orgNodeChanged"] for _ in range(2)]
        # the new node, and its parent (whose version counts its children's changes)
        assert {(c["change"], c["node"]["name"]) for c in created} == {
            ("CREATED", "Team"),
            ("UPDATED", "Root"),
        }
        await create_node(acme, "Elsewhere", other["id"])
        await nothing_more(ws)
        moved = await acme.data(
            "mutation($i: MoveOrgNodeInput!) { moveOrgNode(input: $i) { node { id version } } }",
            {
                "i": {
                    "id": team["id"],
                    "expectedVersion": team["version"],
                    "newParentId": other["id"],
                }
            },
        )
        changes: list[dict[str, Any]] = []
        while not any(c["change"] == "DELETED" for c in changes):
            changes.append((await event(ws))["data"]["orgNodeChanged"])
        assert ("DELETED", "Team") in {(c["change"], c["node"]["name"]) for c in changes}
        assert moved["moveOrgNode"]["node"]["id"] != team["id"]


async def test_two_subscribers_each_get_every_event(sockets: Sockets, acme: Api) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    async with sockets() as open_session:
        first, second = [await open_session(acme.token) for _ in range(2)]
        await subscribe(first, "a", ORDERS, {"u": bob["id"]})
        await subscribe(second, "b", ORDERS, {"u": bob["id"]})
        await settle()
        for sku in ("A", "B"):
            await acme.create_order(bob["id"], [(sku, 1, 100)])
        for ws, op_id in ((first, "a"), (second, "b")):
            skus = [(await event(ws, op_id))["data"]["orderChanged"]["order"]["items"][0]["sku"]]
            skus.append(
                (await event(ws, op_id))["data"]["orderChanged"]["order"]["items"][0]["sku"]
            )
            assert skus == ["A", "B"]


async def test_another_tenants_changes_are_not_sent(
    sockets: Sockets, acme: Api, globex: Api
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    twin = await globex.create_user("bob@globex.test", "Bob")
    assert local_id(twin["id"], "User") != local_id(bob["id"], "User")
    async with sockets() as open_session:
        ws = await open_session(globex.token)
        # the same local id in another tenant names nothing of acme's
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await settle()
        await acme.create_order(bob["id"], [("A", 1, 100)])
        await settle()
        await nothing_more(ws)


async def test_a_subscription_completed_gets_nothing_more(connect: Connect, acme: Api) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await settle()
        await ws.send_json({"type": "complete", "id": "1"})
        await settle()
        await acme.create_order(bob["id"], [("A", 1, 100)])
        await settle()
        await nothing_more(ws)

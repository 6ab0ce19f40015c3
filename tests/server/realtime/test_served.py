"""Subscriptions from a `serve` process over a real socket: a server killed with SIGKILL
loses none of a resuming client's events, on either store and for every field (they are in
the store's change stream, and the client's cursor says where it was)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws

from tests.server.realtime.conftest import PROTOCOL, bearer, receive, subscribe
from tests.server.realtime.streams_harness import (
    MEMBERS,
    ORDERS,
    ORG,
    USER,
    line,
    node,
    order_view,
    unordered,
)
from tests.server.serving.test_serve import Server
from tests.waiting import until

STARTED = "subscription started"
"""The server's log line as a subscription opens its feed (in the same turn of its loop):
what is written after it reaches the subscription."""
CREATE_USER = 'mutation { createUser(input: {email: "bob@acme.test", name: "Bob"}) { id } }'


def create_order(server: Server, user: str, sku: str) -> None:
    line = f'{{sku: "{sku}", name: "x", quantity: 1, unitPriceCents: 100}}'
    body = server.query(
        f'mutation {{ createOrder(input: {{userId: "{user}", currency: "EUR", '
        f"items: [{line}]}}) {{ id }} }}"
    )
    assert "errors" not in body, body


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def make(*flags: str) -> Server:
        server = Server(tmp_path / "data", *flags, log=tmp_path / f"serve-{len(servers)}.log")
        servers.append(server)
        server.wait_healthy()
        return server

    yield make
    for server in servers:
        server.stop()


async def _session(client: httpx.AsyncClient, server: Server) -> Any:
    return aconnect_ws(
        f"{server.url}/graphql",
        client,
        subprotocols=[PROTOCOL],
        keepalive_ping_interval_seconds=None,
    )


def call(server: Server, query: str, variables: dict[str, object]) -> dict[str, Any]:
    body = server.query(query, variables)
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]  # type: ignore[assignment]
    return data


class Writes:
    """The mutations the test makes, over HTTP to whichever server runs."""

    def __init__(self, server: Server) -> None:
        self.server = server

    def __call__(self, query: str, **variables: object) -> dict[str, Any]:
        return call(self.server, query, variables)

    def user(self, name: str) -> str:
        email = f"{name.lower()}@acme.test"
        data = self(
            "mutation($e: String!, $n: String!) { createUser(input: {email: $e, name: $n}) "
            "{ id } }",
            e=email,
            n=name,
        )
        user_id: str = data["createUser"]["id"]
        return user_id

    def order(self, user_id: str, sku: str, price: int) -> str:
        items = [{"sku": sku, "name": f"{sku} item", "quantity": 1, "unitPriceCents": price}]
        data = self(
            "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }",
            i={"userId": user_id, "currency": "EUR", "items": items},
        )
        order_id: str = data["createOrder"]["id"]
        return order_id

    def status(self, order_id: str, status: str, version: int) -> None:
        self(
            "mutation($i: UpdateOrderStatusInput!) { updateOrderStatus(input: $i) { id } }",
            i={"id": order_id, "status": status, "expectedVersion": version},
        )

    def rename(self, user_id: str, name: str, version: int) -> None:
        self(
            "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id } }",
            i={"id": user_id, "name": name, "expectedVersion": version},
        )

    def membership(self, mutation: str, group_id: str, user_id: str) -> None:
        self(
            f"mutation($g: ID!, $u: ID!) {{ {mutation}(groupId: $g, userId: $u) {{ id }} }}",
            g=group_id,
            u=user_id,
        )

    def node(self, name: str, parent: str | None = None) -> str:
        data = self(
            "mutation($i: CreateOrgNodeInput!) { createOrgNode(input: $i) { id } }",
            i={"name": name, "parentId": parent},
        )
        node_id: str = data["createOrgNode"]["id"]
        return node_id

    def delete_node(self, node_id: str, version: int) -> None:
        self(
            "mutation($i: DeleteOrgNodeInput!) { deleteOrgNode(input: $i) { deletedId } }",
            i={"id": node_id, "expectedVersion": version},
        )


FIELDS = {
    "o": ("orderChanged", ORDERS),
    "u": ("userChanged", USER),
    "g": ("groupMembersChanged", MEMBERS),
    "n": ("orgNodeChanged", ORG),
}
"""Each subscription's operation id: its field and selection."""


async def _events(
    ws: AsyncWebSocketSession, counts: dict[str, int], cursors: dict[str, str]
) -> dict[str, list[dict[str, Any]]]:
    """The next `counts[op]` events of each subscription op (an event of another is a
    failure), their cursors left out and the last of each op kept in `cursors`; the events
    of an org node's transaction in a fixed order (see `unordered`)."""
    found: dict[str, list[dict[str, Any]]] = {op: [] for op in counts}
    while any(len(found[op]) < count for op, count in counts.items()):
        message = await receive(ws, 15)
        assert message["type"] == "next", message
        op = message["id"]
        assert "errors" not in message["payload"], message
        assert op in counts, (message, found)
        assert len(found[op]) < counts[op], (message, found)
        data = dict(message["payload"]["data"][FIELDS[op][0]])
        cursors[op] = data.pop("cursor")
        found[op].append(data)
    return found


async def _connect(ws: AsyncWebSocketSession, server: Server) -> None:
    await ws.send_json({"type": "connection_init", "payload": bearer(server.token)})
    assert (await receive(ws, 15))["type"] == "connection_ack"


async def _subscribe(
    ws: AsyncWebSocketSession, server: Server, variables: dict[str, dict[str, Any]]
) -> None:
    """Subscribes to the field of each op in `variables` with its variables, and waits until
    the server has started them."""
    started = server.logged(STARTED) + len(variables)
    for op, values in variables.items():
        await subscribe(ws, op, FIELDS[op][1], values)
    await until(lambda: server.logged(STARTED) >= started, "the subscriptions to start")


def _order(change: str, order_id: str, *view: Any, owner: str) -> dict[str, Any]:
    return {"change": change, "order": order_view(order_id, *view, owner=owner)}


class Views:
    """Events as a subscriber of group `group` or user `bob` sees them."""

    def __init__(self, group: str, bob: str) -> None:
        self.group = group
        self.bob = bob

    def member(self, change: str, user_id: str, name: str) -> dict[str, Any]:
        seen = {"name": name}
        return {"change": change, "groupId": self.group, "userId": user_id, "user": seen}

    def renamed(self, name: str, version: int) -> dict[str, Any]:
        user = {"id": self.bob, "name": name, "email": "bob@acme.test", "version": version}
        return {"change": "UPDATED", "user": user}


def _org(events: list[dict[str, Any]], *sizes: int) -> list[list[dict[str, Any]]]:
    """An org node subscription's events cut into those of its transactions (of `sizes`
    events), each in a fixed order (see `unordered`)."""
    cut, start = [], 0
    for size in sizes:
        cut.append(unordered(events[start : start + size]))
        start += size
    assert start == len(events)
    return cut


async def _nothing_more(
    ws: AsyncWebSocketSession,
    write: Writes,
    views: Views,
    cursors: dict[str, str],
    order: str,
    dave: str,
    root: str,
    line_c: dict[str, Any],
) -> None:
    """A last write on each subscription's topic, after those the test has seen the events
    of: once each one's event comes next, the reader has read every write before it and
    sent none twice; and then nothing more comes (a ping's pong does)."""
    write.status(order, "PAID", 1)
    write.membership("addGroupMember", views.group, dave)
    last = write.node("Last", root)
    end = await _events(ws, {"o": 1, "g": 1, "n": 2}, cursors)
    write.rename(views.bob, "Robin", 5)  # after the order's event, whose owner it names
    end.update(await _events(ws, {"u": 1}, cursors))
    assert {**end, "n": _org(end["n"], 2)} == {
        "o": [_order("UPDATED", order, "PAID", 2, line_c, owner="Robbie")],
        "u": [views.renamed("Robin", 6)],
        "g": [views.member("CREATED", dave, "Dave")],
        "n": _org([node("CREATED", last, "Last", 1), node("UPDATED", root, "Root", 5)], 2),
    }
    await ws.send_json({"type": "ping"})
    assert await receive(ws, 15) == {"type": "pong"}


@pytest.mark.parametrize(
    "store", ["embedded", pytest.param("dynamodb-local", marks=pytest.mark.dynamodb_local)]
)
async def test_every_field_resumes_after_sigkill_losing_nothing(
    serve: Callable[..., Server], store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subscription to each field sees some events; the client goes, more are written,
    the server is killed with SIGKILL, more are written after its restart: each
    subscription resumed by its cursor gets exactly those, then live events."""
    monkeypatch.setenv("KEYGRAPH_STREAM_POLL_INTERVAL", "0.05")
    server = serve("--store", store)
    write = Writes(server)
    bob, carol, dave = write.user("Bob"), write.user("Carol"), write.user("Dave")
    group = write('mutation { createGroup(input: {name: "Ops"}) { id } }')["createGroup"]["id"]
    root = write.node("Root")
    a, b, c = line("A", 1, 100), line("B", 1, 200), line("C", 1, 300)
    views = Views(group, bob)
    cursors: dict[str, str] = {}
    variables = {"o": {"u": bob}, "u": {"id": bob}, "g": {"g": group}, "n": {"id": root}}
    async with httpx.AsyncClient() as client:
        async with await _session(client, server) as ws:
            await _connect(ws, server)
            await _subscribe(ws, server, {"o": variables["o"]})
            first = write.order(bob, "A", 100)
            assert await _events(ws, {"o": 1}, cursors) == {
                "o": [_order("CREATED", first, "PENDING", 1, a, owner="Bob")]
            }
            # the reader has read every write before that order's: none reaches these
            await _subscribe(ws, server, {op: variables[op] for op in ("u", "g", "n")})
            write.status(first, "PAID", 1)
            write.membership("addGroupMember", group, carol)
            team = write.node("Team", root)
            seen = await _events(ws, {"o": 1, "g": 1, "n": 2}, cursors)
            write.rename(bob, "Robert", 1)  # after the order's event, whose owner it names
            seen.update(await _events(ws, {"u": 1}, cursors))
            assert {**seen, "n": _org(seen["n"], 2)} == {
                "o": [_order("UPDATED", first, "PAID", 2, a, owner="Bob")],
                "u": [views.renamed("Robert", 2)],
                "g": [views.member("CREATED", carol, "Carol")],
                "n": _org([node("CREATED", team, "Team", 1), node("UPDATED", root, "Root", 2)], 2),
            }
            # the client goes before it sees these
            second = write.order(bob, "B", 200)
            write.rename(bob, "Bobby", 2)
            write.membership("addGroupMember", group, dave)
            late = write.node("Late", root)
        server.stop()  # SIGKILL
        write.server = restarted = serve("--store", store)
        write.status(second, "CANCELLED", 1)
        write.rename(bob, "Rob", 3)
        write.membership("removeGroupMember", group, carol)
        write.delete_node(late, 1)
        async with await _session(client, restarted) as ws:
            await _connect(ws, restarted)
            await _subscribe(
                ws, restarted, {op: {**variables[op], "after": cursors[op]} for op in FIELDS}
            )
            missed = await _events(ws, {"o": 2, "u": 2, "g": 2, "n": 4}, cursors)
            assert {**missed, "n": _org(missed["n"], 2, 2)} == {
                "o": [
                    _order("CREATED", second, "PENDING", 1, b, owner="Rob"),
                    _order("UPDATED", second, "CANCELLED", 2, b, owner="Rob"),
                ],
                "u": [views.renamed("Bobby", 3), views.renamed("Rob", 4)],
                "g": [
                    views.member("CREATED", dave, "Dave"),
                    views.member("DELETED", carol, "Carol"),
                ],
                "n": _org(
                    [
                        node("CREATED", late, "Late", 1),
                        node("UPDATED", root, "Root", 3),
                        node("DELETED", late, "Late", 1),
                        node("UPDATED", root, "Root", 4),
                    ],
                    2,
                    2,
                ),
            }
            third = write.order(bob, "C", 300)
            write.membership("removeGroupMember", group, dave)
            live = write.node("Live", team)
            now = await _events(ws, {"o": 1, "g": 1, "n": 2}, cursors)
            write.rename(bob, "Robbie", 4)
            now.update(await _events(ws, {"u": 1}, cursors))
            assert {**now, "n": _org(now["n"], 2)} == {
                "o": [_order("CREATED", third, "PENDING", 1, c, owner="Rob")],
                "u": [views.renamed("Robbie", 5)],
                "g": [views.member("DELETED", dave, "Dave")],
                "n": _org([node("CREATED", live, "Live", 1), node("UPDATED", team, "Team", 2)], 2),
            }
            await _nothing_more(ws, write, views, cursors, third, dave, root, c)


async def test_a_message_over_the_body_limit_closes_the_connection(
    serve: Callable[..., Server],
) -> None:
    """A WebSocket message is bounded as a request body is (KEYGRAPH_MAX_BODY_BYTES)."""
    server = serve()
    big = '{"type": "connection_init", "payload": {"x": "' + "a" * (1 << 20) + '"}}'
    async with httpx.AsyncClient() as client, await _session(client, server) as ws:
        await ws.send_text(big)
        with pytest.raises(WebSocketDisconnect) as closed:
            await receive(ws, 15)
    assert closed.value.code == 1009  # message too big

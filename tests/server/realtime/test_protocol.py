"""graphql-transport-ws over /graphql: the subprotocol, connection_init and its token,
the close codes, ping/pong, and the limits on subscriptions."""

from __future__ import annotations

import orjson
import pytest
from httpx_ws import WebSocketDisconnect

from server.auth.tokens import issue_token
from server.settings import Settings
from tests.server.realtime.conftest import Connect, Sockets, bearer, receive, settle, subscribe


def user_query() -> str:
    return "subscription($id: ID!) { userChanged(id: $id) { change cursor user { name } } }"


async def closed_with(ws: object, code: int) -> None:
    with pytest.raises(WebSocketDisconnect) as caught:
        await receive(ws)  # type: ignore[arg-type]
    assert caught.value.code == code


async def test_the_legacy_subprotocol_is_refused(connect: Connect) -> None:
    with pytest.raises(ExceptionGroup) as caught:
        async with connect(subprotocols=["graphql-ws"]):
            pass
    (refused,) = caught.value.exceptions
    assert isinstance(refused, WebSocketDisconnect)
    assert refused.code == 4406


async def test_the_subprotocol_is_accepted(connect: Connect, acme_token: str) -> None:
    async with connect(acme_token) as ws:
        assert ws.subprotocol == "graphql-transport-ws"


async def test_no_connection_init_within_the_timeout_closes_4408(connect: Connect) -> None:
    async with connect() as ws:
        await closed_with(ws, 4408)


async def test_a_bad_token_closes_4403(connect: Connect) -> None:
    async with connect() as ws:
        await ws.send_json({"type": "connection_init", "payload": bearer("not-a-token")})
        await closed_with(ws, 4403)


async def test_no_token_closes_4403(connect: Connect) -> None:
    async with connect() as ws:
        await ws.send_json({"type": "connection_init"})
        await closed_with(ws, 4403)


async def test_a_subscribe_before_the_ack_closes_4401(connect: Connect) -> None:
    async with connect() as ws:
        await subscribe(ws, "1", user_query(), {"id": "VXNlcjp4"})
        await closed_with(ws, 4401)


async def test_a_second_init_closes_4429(connect: Connect, acme_token: str) -> None:
    async with connect(acme_token) as ws:
        await ws.send_json({"type": "connection_init", "payload": bearer(acme_token)})
        await closed_with(ws, 4429)


async def test_a_message_that_is_no_protocol_message_closes_4400(
    connect: Connect, acme_token: str
) -> None:
    async with connect(acme_token) as ws:
        await ws.send_text("[1, 2]")
        await closed_with(ws, 4400)


async def test_a_binary_message_closes_4400(connect: Connect, acme_token: str) -> None:
    async with connect(acme_token) as ws:
        await ws.send_bytes(orjson.dumps({"type": "ping"}))
        await closed_with(ws, 4400)


async def test_ping_gets_pong(connect: Connect, acme_token: str) -> None:
    async with connect(acme_token) as ws:
        await ws.send_json({"type": "ping"})
        assert await receive(ws) == {"type": "pong"}


async def test_a_running_id_again_closes_4409(connect: Connect, acme_token: str) -> None:
    async with connect(acme_token) as ws:
        await subscribe(ws, "1", user_query(), {"id": "VXNlcjp4"})
        await settle()
        await subscribe(ws, "1", user_query(), {"id": "VXNlcjp4"})
        await closed_with(ws, 4409)


async def test_an_expired_token_closes_the_connection(connect: Connect, settings: Settings) -> None:
    token = issue_token(settings, "acme", "alice", ttl_seconds=1, roles=["admin"])
    async with connect(token) as ws:
        await subscribe(ws, "1", user_query(), {"id": "VXNlcjp4"})
        await closed_with(ws, 4403)


async def test_a_query_over_websocket_is_refused(connect: Connect, acme_token: str) -> None:
    async with connect(acme_token) as ws:
        await subscribe(ws, "1", "{ __typename }")
        message = await receive(ws)
        assert message["type"] == "error"
        assert message["payload"][0]["extensions"]["code"] == "BAD_REQUEST"


async def test_an_invalid_document_is_an_error_message(connect: Connect, acme_token: str) -> None:
    async with connect(acme_token) as ws:
        await subscribe(ws, "1", "subscription { nope }")
        message = await receive(ws)
        assert message["type"] == "error"
        assert message["payload"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        await ws.send_json({"type": "ping"})
        assert await receive(ws) == {"type": "pong"}  # the connection goes on


async def test_a_too_deep_document_is_refused(connect: Connect, acme_token: str) -> None:
    nested = "groups { edges { node { members { edges { node { " * 2 + "id" + " } } } } } }" * 2
    query = 'subscription { userChanged(id: "VXNlcjp4") { user { ' + nested + " } } }"
    async with connect(acme_token) as ws:
        await subscribe(ws, "1", query)
        message = await receive(ws)
        assert message["type"] == "error"
        assert message["payload"][0]["extensions"]["code"] == "QUERY_TOO_COMPLEX"


async def test_subscriptions_per_connection_are_limited(connect: Connect, acme_token: str) -> None:
    async with connect(acme_token) as ws:
        for op_id in ("1", "2", "3", "4"):
            await subscribe(ws, op_id, user_query(), {"id": "VXNlcjp4"})
        message = await receive(ws)
        assert message["type"] == "error"
        assert message["id"] == "4"
        assert message["payload"][0]["extensions"]["code"] == "SUBSCRIPTION_LIMIT"
        await ws.send_json({"type": "complete", "id": "1"})
        await settle()
        await subscribe(ws, "5", user_query(), {"id": "VXNlcjp4"})
        await ws.send_json({"type": "ping"})
        assert await receive(ws) == {"type": "pong"}  # "5" was taken: no error before


async def test_subscriptions_per_tenant_and_worker_are_limited(
    sockets: Sockets, acme_token: str, globex_token: str
) -> None:
    async with sockets() as open_session:
        a, b, c = [await open_session(t) for t in (acme_token, acme_token, globex_token)]
        for op_id in ("1", "2", "3"):
            await subscribe(a, op_id, user_query(), {"id": "VXNlcjp4"})
        for op_id in ("1", "2", "3"):
            await subscribe(b, op_id, user_query(), {"id": "VXNlcjp4"})
        message = await receive(b)
        assert message["id"] == "3"
        assert message["payload"][0]["extensions"]["code"] == "SUBSCRIPTION_LIMIT"
        assert "tenant" in message["payload"][0]["message"]
        for op_id in ("1", "2", "3", "4"):
            await subscribe(c, op_id, user_query(), {"id": "VXNlcjp4"})
            await settle()
        errors = [await receive(c) for _ in range(2)]
        assert {e["id"] for e in errors} == {"4", "3"}
        assert all("server" in e["payload"][0]["message"] for e in errors)

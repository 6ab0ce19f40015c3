"""Subscriptions over WebSocket at /graphql, as graphql-transport-ws asks: `connection_init`
carries the bearer token (`{"authorization": "Bearer ..."}`) within `init_timeout`, else the
socket closes 4408 (4403 for a token refused, or once it expires; 4401 for a `subscribe`
before it); then `subscribe` runs a subscription admitted as an HTTP request is (limits,
cost, the tenant's budget) and sends each event as `next`. A stream that fails ends it with
an `error` (STORE_UNAVAILABLE when the store or its stream could not be read, INTERNAL when
no data layer's); a notice that is no event, EVENTS_TRIMMED, is a `next` with that error
and no data; `complete` ends one, `ping` is answered `pong`. A message over MAX_MESSAGE
bytes, or not one of these, closes the socket 4400; a second subscription with a live id
4409; a subscription past the connection's `max_subscriptions`, or its tenant's or the
process's (`subscriptions`: subscription_limits.py), is an `error` (SUBSCRIPTION_LIMIT), the
connection and its other subscriptions going on; a tenant holding `max_connections`
connections in the process gets no more (4429). A subscription's places are given back
however it ends: completed, stopped by the client, or with its connection."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from inspect import isawaitable
from typing import Any

import orjson
from graphql import ExecutionResult, GraphQLError, OperationType, subscribe
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from keygraph.api import ApiContext
from keygraph.api.run import error_code, formatted
from keygraph.errors import KeygraphError, StoreError, StoreUnavailable
from keygraph.store import Session
from keygraph.tokens import TokenError, Verified, bearer

from .admission import Admitted, Refused, admit, persisted_query
from .served import Served
from .subscription_limits import LIMIT_CODE, SubscriptionLimits

log = logging.getLogger("keygraph.serve")
PROTOCOL = "graphql-transport-ws"
MAX_MESSAGE = 128 * 1024
SUBSCRIPTIONS = frozenset({OperationType.SUBSCRIPTION})


def uvicorn_config(app: Any, host: str, port: int, **options: Any) -> Any:
    """How uvicorn serves the app: without permessage-deflate, since a compressed frame
    inflates past what was sent (a deflate bomb), and no frame over MAX_MESSAGE; its logs
    left as configured (request_log.py) from warnings up, without its access log;
    `options` are more of `uvicorn.Config`'s arguments, or others for these."""
    import uvicorn

    settings: dict[str, Any] = {
        "log_level": "warning",
        "log_config": None,
        "access_log": False,
        "ws_per_message_deflate": False,
        "ws_max_size": MAX_MESSAGE,
    }
    return uvicorn.Config(app, host=host, port=port, **{**settings, **options})


class Places:
    """The WebSocket connections each tenant holds in the process."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.held: dict[str, int] = {}

    def take(self, tenant: str) -> bool:
        if self.held.get(tenant, 0) >= self.most:
            return False
        self.held[tenant] = self.held.get(tenant, 0) + 1
        return True

    def give_back(self, tenant: str) -> None:
        left = self.held.get(tenant, 0) - 1
        if left > 0:
            self.held[tenant] = left
        else:
            self.held.pop(tenant, None)


async def serve_socket(
    websocket: WebSocket, served: Served, places: Places, limits: SubscriptionLimits
) -> None:
    """One connection, from its handshake to its close, its subscriptions within `limits`."""
    if PROTOCOL not in websocket.scope.get("subprotocols", []):
        await websocket.close(4406, "Subprotocol not acceptable")
        return
    await websocket.accept(subprotocol=PROTOCOL)
    connection = _Connection(websocket, served, places, limits)
    try:
        await connection.run()
    except WebSocketDisconnect:
        pass
    finally:
        await connection.end()


class _Connection:
    def __init__(
        self, websocket: WebSocket, served: Served, places: Places, limits: SubscriptionLimits
    ) -> None:
        self.websocket = websocket
        self.served = served
        self.places = places
        self.limits = limits
        self.placed: str | None = None
        self.token: Verified | None = None
        self.running: dict[str, asyncio.Task[None]] = {}
        """The subscriptions running, by id: each holds a place in `limits` while there."""
        self.sending = asyncio.Lock()
        self.expiring: asyncio.Task[None] | None = None

    async def run(self) -> None:
        try:
            first = await asyncio.wait_for(self._receive(), self.served.init_timeout)
        except TimeoutError:
            await self._close(4408, "Connection initialisation timeout")
            return
        if first is not None and first.get("type") == "subscribe":
            await self._close(4401, "Unauthorized")
            return
        if first is None or first.get("type") != "connection_init":
            await self._close(4400, "the first message is connection_init")
            return
        payload = first.get("payload") or {}
        try:
            self.token = self.served.verifier.verify(bearer(_authorization(payload)))
        except TokenError:
            await self._close(4403, "Forbidden")
            return
        if not self.places.take(self.token.tenant):
            await self._close(4429, "the tenant holds as many connections as it may")
            return
        self.placed = self.token.tenant
        await self._send({"type": "connection_ack"})
        left = max(0.0, self.token.expires - time.time())
        expiry = asyncio.get_running_loop().call_later(left, self._expire)
        try:
            await self._serve()
        finally:
            expiry.cancel()

    async def _serve(self) -> None:
        """Answers the messages after the ack until the socket closes."""
        while True:
            message = await self._receive()
            if message is None:
                await self._close(4400, "a message is a JSON object of a known type")
                return
            kind = message.get("type")
            if kind == "ping":
                await self._send({"type": "pong"})
            elif kind == "pong":
                continue
            elif kind == "subscribe":
                if not await self._subscribe(message):
                    return
            elif kind == "complete" and isinstance(message.get("id"), str):
                task = self.running.pop(message["id"], None)
                if task is not None:
                    self._give_back()
                    task.cancel()
            elif kind == "connection_init":
                await self._close(4429, "Too many initialisation requests")
                return
            else:
                await self._close(4400, f"unknown message type {kind!r}")
                return

    def _expire(self) -> None:
        """Closes the connection once its token has expired."""
        self.expiring = asyncio.create_task(self._close(4403, "Forbidden: the token has expired"))

    async def _receive(self) -> dict[str, Any] | None:
        """The next message, or None for one that is binary, too large or no JSON object."""
        received = await self.websocket.receive()
        if received["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(received.get("code", 1000), received.get("reason"))
        text = received.get("text")
        if not isinstance(text, str) or len(text) > MAX_MESSAGE:
            return None
        try:
            message = orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
        return message if isinstance(message, dict) else None

    async def _subscribe(self, message: dict[str, Any]) -> bool:
        """Starts a subscription; False when the socket was closed for it."""
        ident, payload = message.get("id"), message.get("payload")
        if not isinstance(ident, str) or not isinstance(payload, dict):
            await self._close(4400, "subscribe takes an id and a payload")
            return False
        if ident in self.running:
            await self._close(4409, f"Subscriber for {ident} already exists")
            return False
        resolved = persisted_query(self.served, payload)
        if isinstance(resolved, Refused):
            await self._send({"type": "error", "id": ident, "payload": resolved.errors})
            return True
        query = payload.get("query") if resolved is None else resolved
        variables, name = payload.get("variables"), payload.get("operationName")
        if not isinstance(query, str) or not isinstance(variables, dict | None):
            await self._close(4400, "a subscribe payload has a query and variables")
            return False
        assert self.token is not None
        if len(self.running) >= self.served.max_subscriptions:
            limit = self.served.max_subscriptions
            reason: str | None = f"at most {limit} subscriptions a connection"
        else:
            reason = await self.limits.take(self.token.tenant)
        if reason is not None:
            error = {"message": reason, "extensions": {"code": LIMIT_CODE}}
            await self._send({"type": "error", "id": ident, "payload": [error]})
            return True
        try:
            admitted = await admit(
                self.served,
                self.token.tenant,
                query,
                variables,
                name if isinstance(name, str) else None,
                SUBSCRIPTIONS,
            )
        except BaseException:
            self._give_back()
            raise
        if isinstance(admitted, Refused):
            self._give_back()
            await self._send({"type": "error", "id": ident, "payload": admitted.errors})
            return True
        task = asyncio.create_task(self._run(ident, admitted, name))
        self.running[ident] = task
        task.add_done_callback(lambda _t: self._ended(ident, task))
        return True

    def _ended(self, ident: str, task: asyncio.Task[None]) -> None:
        """A subscription's task ended, by itself: its place is given back."""
        if self.running.get(ident) is task:
            del self.running[ident]
            self._give_back()

    def _give_back(self) -> None:
        """Gives back a subscription's place in the tenant's and the process's limits."""
        assert self.token is not None
        self.limits.release(self.token.tenant)

    async def _run(self, ident: str, admitted: Admitted, name: Any) -> None:
        assert self.token is not None
        token = self.token
        served = self.served
        session = Session(served.store, served.cursors.bound_to(token.caller.subject), token.caller)

        async def notify(error: dict[str, Any]) -> None:
            await self._send({"type": "next", "id": ident, "payload": {"errors": [error]}})

        def started() -> None:
            log.info("subscription started", extra={"tenant": token.tenant, "id": ident})

        context = ApiContext(
            session, token.tenant, realtime=served.realtime, notify=notify, started=started
        )
        outcome: Any = subscribe(
            served.schema,
            admitted.document,
            context_value=context,
            variable_values=admitted.variables,
            operation_name=name if isinstance(name, str) else None,
        )
        result = await outcome if isawaitable(outcome) else outcome
        if isinstance(result, ExecutionResult):
            errors = [formatted(e) for e in admitted.located(result.errors or [])]
            await self._send({"type": "error", "id": ident, "payload": errors})
            return
        events: AsyncIterator[ExecutionResult] = result
        try:
            async for event in events:
                body: dict[str, Any] = {"data": event.data}
                if event.errors:
                    body["errors"] = [formatted(e) for e in admitted.located(event.errors)]
                await self._send({"type": "next", "id": ident, "payload": body})
            await self._send({"type": "complete", "id": ident})
        except (GraphQLError, KeygraphError, OSError) as exc:
            error = exc if isinstance(exc, GraphQLError) else _located(exc)
            if isinstance(exc, StoreError | OSError) and error_code(error) == "INTERNAL":
                log.warning("subscription %s ended: the store is unavailable (%s)", ident, exc)
                error = _located(StoreUnavailable("the store is unavailable"))
            [error] = admitted.located([error])
            await self._send({"type": "error", "id": ident, "payload": [formatted(error)]})
        except Exception as exc:  # an extension's stream that failed: INTERNAL, logged
            log.exception("subscription %s failed", ident)
            await self._send({"type": "error", "id": ident, "payload": [formatted(_located(exc))]})
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()

    def _open(self) -> bool:
        """Whether the socket may still be sent to: neither side has closed it."""
        connected = WebSocketState.CONNECTED
        websocket = self.websocket
        return websocket.client_state is connected and websocket.application_state is connected

    async def _send(self, message: dict[str, Any]) -> None:
        async with self.sending:
            if self._open():
                await self.websocket.send_text(orjson.dumps(message).decode())

    async def _close(self, code: int, reason: str) -> None:
        """Closes the socket, between two sends (a token's expiry runs beside them)."""
        async with self.sending:
            if self._open():
                await self.websocket.close(code, reason)

    async def end(self) -> None:
        """Gives back its places and cancels what still runs, once the socket is gone."""
        if self.placed is not None:
            self.places.give_back(self.placed)
            self.placed = None
        tasks = list(self.running.values())
        self.running.clear()
        for _task in tasks:
            self._give_back()
        if self.expiring is not None:
            tasks.append(self.expiring)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _located(exc: Exception) -> GraphQLError:
    """An error as GraphQL shows it, its code from its kind (keygraph.api.run): INTERNAL,
    its message masked, for one that is no data layer's."""
    return GraphQLError(str(exc), original_error=exc)


def _authorization(payload: Any) -> str | None:
    if not isinstance(payload, dict):
        return None
    value = payload.get("authorization") or payload.get("Authorization")
    return value if isinstance(value, str) else None

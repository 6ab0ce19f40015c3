"""One WebSocket connection speaking graphql-transport-ws (the protocol of graphql-ws, Apollo
and urql; the legacy `graphql-ws` subprotocol is refused).

A worker holds at most so many connections (past it a new one is closed 1013), of those at most
so many awaiting `connection_init` (past it the oldest of those is closed 1013), and at most so
many initialised ones of one tenant (past it the new one is closed 1013). A client must send
`connection_init` with its token within the init timeout (else close 4408); a bad token closes
4403, any other message before the ack closes 4401, a second init 4429, a subscribe reusing a
running id 4409, a message that is no protocol message 4400. `ping` gets `pong`. Each
`subscribe` is prepared like an HTTP operation (size limits, validation, cost) and must be a
subscription; it is refused with an `error` message when a limit on subscriptions (per
connection, tenant, worker) is reached. The connection closes 4403 when its token expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

import orjson
from graphql import GraphQLError, OperationType, get_operation_ast
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from keygraph.cursor import CursorCodec
from keygraph.errors import StoreError
from keygraph.realtime.cursors import EventCursors
from keygraph.realtime.hub import Hub
from keygraph.serve.budget import Budget, throttled
from keygraph.serve.subscription_limits import LIMIT_CODE, SubscriptionLimits
from keygraph.store import Session, Store
from server.auth.tokens import Claims, Verifier
from server.errors import ApiError, StoreUnavailableError, Unauthenticated
from server.graphql.error_format import format_error
from server.graphql.schema import KeygraphSchema
from server.realtime.auth import authenticate
from server.realtime.context import SubscriptionContext
from server.realtime.events import Events, open_events
from server.realtime.fanout import SEND_NOW, Fanout
from server.realtime.limits import ConnectionLimits
from server.realtime.metered import Meter

log = logging.getLogger("keygraph.realtime")

SUBPROTOCOL = "graphql-transport-ws"
UNAVAILABLE = StoreUnavailableError.code
BAD_MESSAGE, UNAUTHORIZED, FORBIDDEN, INIT_TIMEOUT = 4400, 4401, 4403, 4408
DUPLICATE_ID, TOO_MANY_INITS, SUBPROTOCOL_REFUSED = 4409, 4429, 4406
TRY_AGAIN_LATER = 1013
"""RFC 6455's close code for a server that cannot take the connection now: graphql-ws
clients retry it (they give up on 4429)."""


class Realtime:
    """What every connection of a worker shares: schema, store, token verifier, hub,
    limits, and the tenants' budgets (those HTTP requests are charged to)."""

    def __init__(
        self,
        schema: KeygraphSchema,
        store: Store,
        verifier: Verifier,
        cursors: CursorCodec,
        hub: Hub,
        limits: SubscriptionLimits,
        connections: ConnectionLimits,
        budget: Budget,
        *,
        init_timeout: float,
        per_connection: int,
    ) -> None:
        self.schema = schema
        self.store = store
        self.verifier = verifier
        self.cursors = cursors
        self.events = EventCursors(cursors)
        self.hub = hub
        self.fanout = Fanout(hub, self.events)
        self.limits = limits
        self.connections = connections
        self.budget = budget
        self.init_timeout = init_timeout
        self.per_connection = per_connection

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        websocket = WebSocket(scope, receive, send)
        if SUBPROTOCOL not in websocket.scope.get("subprotocols", []):
            await websocket.close(SUBPROTOCOL_REFUSED)
            return
        connection = Connection(self, websocket)
        if not self.connections.take(connection, connection.evict):
            limit = self.connections.max_open
            log.warning("websocket connection refused: the worker holds %d connections", limit)
            await websocket.accept(SUBPROTOCOL)
            await websocket.close(TRY_AGAIN_LATER, "Too many connections")
            return
        try:
            await websocket.accept(SUBPROTOCOL)
            await connection.serve()
        finally:
            self.connections.release(connection)


class Connection:
    """The protocol of one accepted connection and its running subscriptions."""

    def __init__(self, realtime: Realtime, websocket: WebSocket) -> None:
        self.realtime = realtime
        self.websocket = websocket
        self.claims: Claims | None = None
        self.running: dict[str, asyncio.Task[None]] = {}
        self._send_lock = asyncio.Lock()
        self._write_now = (websocket.scope.get("extensions") or {}).get(SEND_NOW)
        # a flag and a timer, not an asyncio.Event and a sleeping task: an idle connection
        # holds little
        self._closed = False
        self._closing: asyncio.Task[None] | None = None
        self._init_wait: asyncio.Timeout | None = None
        self._evicted = False

    async def serve(self) -> None:
        expiry: asyncio.TimerHandle | None = None
        try:
            expires = await self._initialize()
            if expires is None:
                return
            delay = max(0.0, expires - time.time())
            expiry = asyncio.get_running_loop().call_later(delay, self._expire)
            while True:
                message = await self._receive()
                if message is None:
                    return
                await self._handle(message)
        except WebSocketDisconnect:
            pass
        finally:
            if expiry is not None:
                expiry.cancel()
            for task in list(self.running.values()):
                task.cancel()
            for task in list(self.running.values()):
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _initialize(self) -> float | None:
        """Waits for `connection_init` and acks it; when its token expires, or None when
        the connection was closed instead."""
        timed_out = False
        try:
            async with asyncio.timeout(self.realtime.init_timeout) as self._init_wait:
                message = None if self._evicted else await self._receive()
        except TimeoutError:
            message, timed_out = None, True
        finally:
            self.realtime.connections.initialised(self)  # no longer evictable
        if self._evicted:
            limit = self.realtime.connections.max_awaiting_init
            log.warning("websocket connection closed: %d newer ones await their init", limit)
            await self._close(TRY_AGAIN_LATER, "Too many connections awaiting initialisation")
            return None
        if timed_out:
            await self._close(INIT_TIMEOUT, "Connection initialisation timeout")
            return None
        if message is None:
            return None
        if message.get("type") != "connection_init":
            await self._close(UNAUTHORIZED, "Unauthorized")
            return None
        try:
            self.claims, expires = authenticate(self.realtime.verifier, message.get("payload"))
        except Unauthenticated as exc:
            log.warning("websocket connection refused: %s", exc)
            await self._close(FORBIDDEN, "Forbidden")
            return None
        if not await self.realtime.connections.admit(self, self.claims.tenant):
            limit = self.realtime.connections.per_tenant
            log.warning("websocket connection closed: its tenant holds %d connections", limit)
            await self._close(TRY_AGAIN_LATER, "Too many connections for the tenant")
            return None
        await self._send({"type": "connection_ack"})
        return expires

    def evict(self) -> None:
        """Ends the wait for `connection_init` now, to make room for a newer connection."""
        self._evicted = True
        if self._init_wait is not None:
            self._init_wait.reschedule(0)

    def _expire(self) -> None:
        """Closes the connection once its token has expired."""
        self._closing = asyncio.create_task(
            self._close(FORBIDDEN, "Forbidden: the token has expired")
        )

    async def _receive(self) -> dict[str, Any] | None:
        """The next protocol message; None once the connection is closed (a message that is
        no JSON object with a string `type`, or a binary one, closes it 4400)."""
        if self._closed:
            return None
        received = await self.websocket.receive()
        if received["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(received.get("code", 1000), received.get("reason"))
        try:
            message = orjson.loads(received.get("text") or b"")
        except orjson.JSONDecodeError:
            message = None
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            await self._close(BAD_MESSAGE, "Invalid message received")
            return None
        return message

    async def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "ping":
            await self._send({"type": "pong"})
        elif kind == "pong":
            return
        elif kind == "connection_init":
            await self._close(TOO_MANY_INITS, "Too many initialisation requests")
        elif kind == "subscribe":
            await self._subscribe(message)
        elif kind == "complete":
            task = self.running.pop(str(message.get("id")), None)
            if task is not None:
                task.cancel()
        else:
            await self._close(BAD_MESSAGE, f"Invalid message type {kind!r}")

    async def _subscribe(self, message: dict[str, Any]) -> None:
        op_id, payload = message.get("id"), message.get("payload")
        if (
            not isinstance(op_id, str)
            or not op_id
            or not isinstance(payload, dict)
            or not isinstance(payload.get("query"), str)
        ):
            await self._close(BAD_MESSAGE, "Invalid subscribe message")
            return
        if op_id in self.running:
            await self._close(DUPLICATE_ID, f"Subscriber for {op_id} already exists")
            return
        claims = self.claims
        assert claims is not None
        if len(self.running) >= self.realtime.per_connection:
            limit = self.realtime.per_connection
            reason: str | None = f"the connection holds its most subscriptions ({limit})"
        else:
            reason = await self.realtime.limits.take(claims.tenant)
        if reason is not None:
            log.warning("subscription refused: %s", reason)
            await self._error(op_id, [{"message": reason, "extensions": {"code": LIMIT_CODE}}])
            return
        task = asyncio.create_task(self._run(op_id, payload, claims))
        self.running[op_id] = task
        task.add_done_callback(lambda done: self._ended(op_id, done, claims.tenant))

    def _ended(self, op_id: str, task: asyncio.Task[None], tenant: str) -> None:
        """Gives a subscription's place back however its task ended, cancelled before its
        first step too (a `complete` in the same read as its `subscribe`)."""
        self.realtime.limits.release(tenant)
        if self.running.get(op_id) is task:
            del self.running[op_id]

    async def _run(self, op_id: str, payload: dict[str, Any], claims: Claims) -> None:
        """One subscription, from its preparation to its last event."""
        request_id = uuid.uuid4().hex
        name = payload.get("operationName")
        operation = name if isinstance(name, str) else None
        begun = time.perf_counter()
        events: Events | None = None
        try:
            errors, events = await self._start(op_id, payload, claims, request_id)
            del payload  # an idle subscription keeps none of its message
            if events is None:
                await self._error(op_id, errors)
                return
            log.info("subscription started", extra=_fields(request_id, claims, operation))
            events.ctx.seat = self.realtime.fanout.seats(events, op_id, self.send_now)
            async with events.closing() as source:
                async for event in source:
                    body = orjson.Fragment(await events.body(event))
                    await self._send({"type": "next", "id": op_id, "payload": body})
                    events.sent += 1
            await self._send({"type": "complete", "id": op_id})
        except ApiError as exc:  # a stream that cannot go on (its subscriber too slow)
            log.warning("subscription ended: %s", exc)
            error = {"message": str(exc), "extensions": exc.extensions}
            await self._error(op_id, [error])
        except (StoreError, OSError) as exc:  # the stream could not be read (a replay)
            log.warning("subscription ended: the store is unavailable (%s)", exc)
            error = {"message": "the store is unavailable", "extensions": {"code": UNAVAILABLE}}
            await self._error(op_id, [error])
        except WebSocketDisconnect:
            pass
        finally:
            if events is not None:
                fields = _fields(request_id, claims, operation)
                fields.update(events=events.sent, duration_s=round(time.perf_counter() - begun, 1))
                log.info("subscription ended", extra=fields)

    async def _start(
        self, op_id: str, payload: dict[str, Any], claims: Claims, request_id: str
    ) -> tuple[list[dict[str, Any]], Events | None]:
        """The errors that stop the subscription, or its events."""
        realtime = self.realtime
        schema = realtime.schema
        preparation = schema.preparation
        name = payload.get("operationName")
        variables = payload.get("variables") or {}
        if not isinstance(name, str | None) or not isinstance(variables, dict):
            return [_bad_request("operationName must be a string, variables an object")], None
        query = payload["query"]
        try:
            prepared = preparation.prepared(schema._schema, query)
        except GraphQLError as error:
            return self._formatted([error], request_id), None
        caller = None if claims.unrestricted else claims.caller
        errors, found = preparation.screen(schema._schema, prepared, name, variables, caller)
        if errors:
            return self._formatted(errors, request_id), None
        operation = get_operation_ast(prepared.document, name)
        if operation is None or operation.operation is not OperationType.SUBSCRIPTION:
            return [_bad_request("only subscription operations run over WebSocket")], None
        meter = None
        if found is not None:  # else the variables do not coerce: it is refused below
            admission = await realtime.budget.admit(claims.tenant, found.cost)
            if not admission.admitted:
                return self._formatted([throttled(admission, found.cost)], request_id), None
            meter = Meter(realtime.budget, claims.tenant, found)
        ctx = self._context(op_id, claims, request_id, meter)
        opened = await open_events(schema, query, prepared.document, name, variables, ctx, meter)
        if isinstance(opened, list):  # refused when subscribing: nothing to pay
            if found is not None:
                realtime.budget.refund(claims.tenant, found.cost)
            return self._formatted(opened, request_id), None
        return [], opened

    def _context(
        self, op_id: str, claims: Claims, request_id: str, meter: Meter | None
    ) -> SubscriptionContext:
        realtime = self.realtime
        cursors = realtime.cursors.bound_to(claims.subject)

        async def notify(error: dict[str, Any]) -> None:
            await self._send({"type": "next", "id": op_id, "payload": {"errors": [error]}})

        return SubscriptionContext(
            tenant=claims.tenant,
            caller=claims.caller,
            unrestricted=claims.unrestricted,
            session=Session(realtime.store, cursors, claims.caller),
            server_session=Session(realtime.store, cursors),
            request_id=request_id,
            hub=realtime.hub,
            cursors=realtime.events,
            notify=notify,
            meter=meter,
        )

    def _formatted(self, errors: list[GraphQLError], request_id: str) -> list[dict[str, Any]]:
        self.realtime.schema.process_errors(errors)
        return [format_error(error, request_id) for error in errors]

    async def _error(self, op_id: str, errors: list[dict[str, Any]]) -> None:
        await self._send({"type": "error", "id": op_id, "payload": errors})

    async def _send(self, message: dict[str, Any]) -> None:
        """Sends a message, unless the connection is closed or its client gone: a send that
        finds the client gone raises WebSocketDisconnect once, and the others send nothing."""
        async with self._send_lock:
            if self._closed or self.websocket.application_state is not WebSocketState.CONNECTED:
                return
            await self.websocket.send_text(orjson.dumps(message).decode())

    def send_now(self, frame: bytes) -> bool:
        """Writes a text message's frame now if the socket takes it at once and no other
        message is being sent; False, and nothing written, if not."""
        write = self._write_now
        return not (self._closed or self._send_lock.locked() or write is None) and write(frame)

    async def _close(self, code: int, reason: str) -> None:
        async with self._send_lock:
            if self._closed:
                return
            self._closed = True
            if self.websocket.application_state is WebSocketState.CONNECTED:
                await self.websocket.close(code, reason)


def _fields(request_id: str, claims: Claims, operation: str | None) -> dict[str, Any]:
    """A subscription's log fields, as the request log's."""
    return {"request_id": request_id, "tenant": claims.tenant, "operation": operation}


def _bad_request(message: str) -> dict[str, Any]:
    return {"message": message, "extensions": {"code": "BAD_REQUEST"}}

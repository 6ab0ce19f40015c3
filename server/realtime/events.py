"""How a subscription's events are resolved. Subscribing builds the operation's executor
and its plan (keygraph/execution: the selection under the root field, compiled once,
the root field's value being each event) and opens the source stream through the root
field's resolver, which checks the caller's rights. Each event then runs the plan against
the changed object (graphql-core's executor, where the compiler leaves the operation to it
or compiled execution is off), and its `next` payload is serialized once.

Subscribers of the same change with the same operation, variables, tenant and caller
(subject, roles, claims) would get the same payload: the first to take the change resolves
and serializes it, the others send those bytes (a payload with an INTERNAL error, which
names its subscription's request, is not shared). Each subscriber's event is charged to its
tenant's budget (server/realtime/metered.py), shared or not."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

import orjson
from graphql import DocumentNode, ExecutionResult, GraphQLError, create_source_event_stream
from strawberry.execution.is_awaitable import optimized_is_awaitable

from keygraph.execution.operation import build_executor
from keygraph.execution.plan import OperationPlan
from keygraph.execution.run import Run
from server.graphql.compiled.executor import CompiledExecutor
from server.graphql.error_format import format_error
from server.graphql.executor import Executor
from server.graphql.schema import KeygraphSchema
from server.realtime.context import SubscriptionContext
from server.realtime.metered import Meter

Payload = tuple[bytes, int]
"""A serialized `next` payload and the counted objects it holds."""


class Events:
    """One subscription's source stream and how each of its events becomes a payload."""

    __slots__ = ("ctx", "executor", "meter", "plan", "schema", "sent", "share", "source")

    def __init__(
        self,
        schema: KeygraphSchema,
        executor: Executor,
        plan: OperationPlan | None,
        source: AsyncIterable[Any],
        share: bytes,
        meter: Meter | None,
    ) -> None:
        self.schema = schema
        self.executor = executor
        self.plan = plan
        """None: graphql-core's executor resolves each event."""
        self.source = source
        self.ctx: SubscriptionContext = executor.context_value
        self.share = share
        """What the payload of a change depends on, besides the change."""
        self.meter = meter
        """Charges each event to the tenant's budget; None: not charged."""
        self.sent = 0
        """Events sent to the subscriber."""

    def closing(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """The source stream, closed (and so its feed) however the subscription ends."""
        if isinstance(self.source, AsyncGenerator):
            return contextlib.aclosing(self.source)
        return contextlib.nullcontext(self.source)

    async def body(self, event: Any) -> bytes:
        """The serialized `next` payload of an event the source stream gave; raises
        Throttled, before any store read, when the tenant's budget lacks its cost."""
        meter = self.meter
        if meter is not None:
            meter.take()
        (body, objects), _shared = await self.payload(event)
        if meter is not None:
            meter.settle(objects)
        return body

    async def payload(self, event: Any) -> tuple[Payload, bool]:
        """The event's payload, uncharged, and whether the other subscribers with the same
        key may send it."""
        change = self.ctx.change
        if change is None:
            return await self._resolve(event)
        shared = change.shared
        found = shared.get(self.share)
        if found is not None:
            payload = found.result() if found.done() else await asyncio.shield(found)
            if payload is not None:
                return payload, True
            return await self._resolve(event)
        future: asyncio.Future[Payload | None] = asyncio.get_running_loop().create_future()
        shared[self.share] = future
        try:
            payload, shareable = await self._resolve(event)
            future.set_result(payload if shareable else None)
        finally:
            if not future.done():  # failed or cancelled: the others resolve their own
                future.set_result(None)
        return payload, shareable

    async def _resolve(self, event: Any) -> tuple[Payload, bool]:
        """The event's payload, serialized, and whether another subscriber may send it."""
        executor = self.executor.build_per_event_executor(event)
        plan = self.plan
        result: Any = (
            Run(executor, plan).start() if plan is not None else executor.execute_operation(False)
        )
        if executor.is_awaitable(result):
            result = await result
        assert isinstance(result, ExecutionResult)
        payload: dict[str, Any] = {"data": result.data}
        shareable = True
        if result.errors:
            self.schema.process_errors(result.errors)
            request_id = self.ctx.request_id
            errors = [format_error(error, request_id) for error in result.errors]
            payload["errors"] = errors
            shareable = all(error["extensions"]["code"] != "INTERNAL" for error in errors)
        objects = 0 if self.meter is None else self.meter.objects(result.data)
        return (orjson.dumps(payload), objects), shareable


async def open_events(
    schema: KeygraphSchema,
    query: str,
    document: DocumentNode,
    name: str | None,
    variables: dict[str, Any],
    ctx: SubscriptionContext,
    meter: Meter | None,
) -> Events | list[GraphQLError]:
    """The subscription's events, or the errors that stop it (its variables', or its root
    field's: FORBIDDEN, NOT_FOUND, INVALID_CURSOR)."""
    graphql_schema = schema._schema
    executor: Executor | None = None
    if schema.compiled:
        executor = build_executor(
            CompiledExecutor,
            graphql_schema,
            document,
            name,
            variables,
            is_awaitable=optimized_is_awaitable,
            operation_extensions=None,
        )
    if executor is None:
        built = Executor.build(graphql_schema, document, None, ctx, variables, name)
        if isinstance(built, list):
            return built
        executor = built
    executor.context_value = ctx
    plan = executor.plan() if isinstance(executor, CompiledExecutor) else None
    source: Any = create_source_event_stream(executor)
    if executor.is_awaitable(source):
        source = await source
    if isinstance(source, ExecutionResult):
        return source.errors or []
    share = _share_key(query, name, variables, ctx)
    return Events(schema, executor, plan, source, share, meter)


def _share_key(
    query: str, name: str | None, variables: dict[str, Any], ctx: SubscriptionContext
) -> bytes:
    """A digest of what an event's payload depends on besides the change: the operation,
    its variables, the tenant and the caller (its subject too: owner rules and page cursors
    depend on it)."""
    caller = ctx.caller
    described = [
        query,
        name,
        variables,
        ctx.tenant,
        ctx.unrestricted,
        caller.subject,
        sorted(caller.roles),
        sorted(caller.claims.items()),
    ]
    text = orjson.dumps(described, option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(text, digest_size=32).digest()

"""The Subscription fields of a generated package's API: `xChanged(<key>, after)` follows
one item on the table's change stream (keygraph.realtime), replaying what the stream holds
after a cursor, then live. The item's get pattern's rule decides at subscribe, before
anything is read; each change answers its kind, the item as the write left it (as it was,
deleted) and the cursor to resume after it."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLObjectType, GraphQLSchema

from keygraph.errors import BadArgument, Forbidden, KeygraphError
from keygraph.plan import Item, TableDef
from keygraph.realtime.changes import Change, Decode, Topic, change_of
from keygraph.realtime.cursors import EventCursors
from keygraph.realtime.follow import FeedLost, follow
from keygraph.realtime.hub import Hub
from keygraph.streams import Partitions, StreamRecord

from .answers import arguments
from .bindings import Api, Watch


class SubscriberTooSlow(KeygraphError):
    """The subscriber fell more changes behind than its feed holds."""


@dataclass(frozen=True, slots=True)
class Realtime:
    """What a subscription reads: the process's hub, the event cursors, the table, and how
    a tenant pays for a replay (`pay(tenant)` charges points; it raises to refuse)."""

    hub: Hub
    cursors: EventCursors
    table: TableDef
    pay: Callable[[str], Callable[[int], None]]


def decoder(api: Api, table: TableDef) -> Decode:
    """How the hub reads a record: a change to a watched entity's item, published on the
    item's own topic."""
    watched = {watch.entity_type for watch in api.watches.values()}

    def topics(entity_type: str, _model: Any, keys: Item) -> tuple[Topic, ...]:
        return ((entity_type, _key_text(table, keys)),) if entity_type in watched else ()

    def decode(record: StreamRecord, shard_id: str, frontier: Any) -> Change | None:
        return change_of(record, shard_id, frontier, api.entities, topics)

    return decode


def _key_text(table: TableDef, key: Item) -> str:
    return f"{key[table.partition_key]}\n{key[table.sort_key]}"


def bind_subscriptions(schema: GraphQLSchema, api: Api) -> None:
    """Subscribes each Subscription field by its watch; ValueError for one nothing binds."""
    subscription = schema.subscription_type
    if subscription is None:
        return
    unbound = sorted(set(subscription.fields) - set(api.watches))
    if unbound:
        raise ValueError(f"subscriptions with nothing to follow: {', '.join(unbound)}")
    for name, watch in api.watches.items():
        field = subscription.fields[name]
        change = getattr(field.type, "of_type", field.type)
        assert isinstance(change, GraphQLObjectType)
        shown = next(f for f in change.fields if f not in ("kind", "cursor"))
        field.subscribe = _subscriber(watch, shown)
        field.resolve = _payload


def _payload(payload: Any, _info: Any, **_args: Any) -> Any:
    return payload


def _subscriber(watch: Watch, shown: str) -> Callable[..., Any]:
    async def subscribe(
        _source: Any, info: Any, after: str | None = None, **given: Any
    ) -> AsyncGenerator[dict[str, Any]]:
        """Decides before anything is read (the rule, the cursor), then follows."""
        ctx = info.context
        realtime: Realtime | None = getattr(ctx, "realtime", None)
        if realtime is None:
            raise BadArgument("subscriptions are served over WebSocket, at /graphql")
        values = arguments(watch.args, given)
        caller = ctx.session.caller
        if caller is not None and watch.guard is not None:
            owners = {owner: values.get(owner) for owner in watch.guard.owners}
            if not watch.guard.function(caller, **owners):
                raise Forbidden("not allowed to read this item")
        key = watch.key(ctx.tenant, *values.values())
        frontier = None if after is None else realtime.cursors.decode(ctx.tenant, after)
        partition = str(key[realtime.table.partition_key])
        changes = follow(
            realtime.hub,
            realtime.cursors,
            ctx.tenant,
            (watch.entity_type, _key_text(realtime.table, key)),
            frontier,
            lambda _change: True,
            within=Partitions(realtime.table.partition_key, (partition,)),
            pay=realtime.pay(ctx.tenant),
            trimmed=_nothing,
        )
        return _events(changes, shown)

    return subscribe


async def _events(
    changes: AsyncGenerator[tuple[Change, str]], shown: str
) -> AsyncGenerator[dict[str, Any]]:
    try:
        async for change, cursor in changes:
            yield {"kind": change.kind, shown: change.model, "cursor": cursor}
    except FeedLost as exc:
        raise SubscriberTooSlow(str(exc)) from exc
    finally:
        await changes.aclose()


async def _nothing() -> None:
    """A replay from a cursor older than the stream keeps goes on from the oldest kept."""

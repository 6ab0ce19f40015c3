"""The Subscription fields of a generated package's API: `xChanged(<key>, after)` follows
one item on the table's change stream (keygraph.realtime), and `<pattern>Changed(<its
arguments>, after)` the items a query pattern reads, replaying what the stream holds after
a cursor, then live. The get or query pattern's rule decides at subscribe, before anything
is read; each change answers its kind, the item as the write left it (as it was, deleted)
and the cursor to resume after it. An extension's subscription follows watches the same
way (`opened`, then `following` one or several; follows.py)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLObjectType, GraphQLSchema

from keygraph.errors import BadArgument, Forbidden, KeygraphError
from keygraph.keycodec import escape
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


TRIMMED: dict[str, Any] = {
    "message": "events after the cursor are no longer kept; replaying from the oldest kept",
    "extensions": {"code": "EVENTS_TRIMMED"},
}
"""The error a subscriber whose cursor is older than the stream keeps is told once, with no
data, before the oldest changes kept replay (as the repository's server tells it)."""


@dataclass(frozen=True, slots=True)
class Realtime:
    """What a subscription reads: the process's hub, the event cursors, the table, and how
    a tenant pays for a replay (`pay(tenant)` charges points; it raises to refuse)."""

    hub: Hub
    cursors: EventCursors
    table: TableDef
    pay: Callable[[str], Callable[[int], None]]
    tenant_prefixes: tuple[str, ...] = ()
    """The text before the tenant in its partition keys (the package's)."""

    def tenant_heads(self, tenant: str) -> tuple[str, ...]:
        """Where the tenant's items lie: its partition keys begin so."""
        return tuple(prefix + escape(tenant) for prefix in self.tenant_prefixes)


def decoder(api: Api, table: TableDef) -> Decode:
    """How the hub reads a record: a change to a watched entity's item, published on the
    item's own topic, and on each watched pattern's partition the item was or is in."""
    items = {watch.entity_type for watch in api.watches.values() if watch.key is not None}
    partitions: dict[str, list[tuple[str, str]]] = {}
    for name, watch in api.watches.items():
        if watch.plan is not None:
            attribute = _partition_attribute(table, watch.index)
            partitions.setdefault(watch.entity_type, []).append((name, attribute))

    def topics(entity_type: str, _model: Any, record: StreamRecord) -> tuple[Topic, ...]:
        found = [(entity_type, _key_text(table, record.keys))] if entity_type in items else []
        for name, attribute in partitions.get(entity_type, ()):
            for image in (record.new, record.old):
                value = None if image is None else image.get(attribute)
                if isinstance(value, str) and (name, value) not in found:
                    found.append((name, value))
        return tuple(found)

    def decode(record: StreamRecord, shard_id: str, frontier: Any) -> Change | None:
        return change_of(record, shard_id, frontier, api.entities, topics)

    return decode


def _partition_attribute(table: TableDef, index: str | None) -> str:
    return table.partition_key if index is None else table.index(index).partition_key


def _sort_attribute(table: TableDef, index: str | None) -> str | None:
    return table.sort_key if index is None else table.index(index).sort_key


def _key_text(table: TableDef, key: Item) -> str:
    return f"{key[table.partition_key]}\n{key[table.sort_key]}"


def bind_subscriptions(schema: GraphQLSchema, api: Api) -> None:
    """Subscribes each Subscription field by its watch; ValueError for one nothing binds."""
    subscription = schema.subscription_type
    if subscription is None:
        return
    fielded = {name: watch for name, watch in api.watches.items() if watch.fielded}
    unbound = sorted(set(subscription.fields) - set(fielded))
    if unbound:
        raise ValueError(f"subscriptions with nothing to follow: {', '.join(unbound)}")
    for name, watch in fielded.items():
        field = subscription.fields[name]
        change = getattr(field.type, "of_type", field.type)
        assert isinstance(change, GraphQLObjectType)
        shown = next(f for f in change.fields if f not in ("kind", "cursor"))
        field.subscribe = _subscriber(watch, name, shown)
        field.resolve = event


def event(payload: Any, info: Any, **_args: Any) -> Any:
    """A Subscription field's answer to one of its events: the payload, with what the
    events before it loaded forgotten (each reads its items afresh)."""
    info.context.loads.forget()
    return payload


Followed = tuple[Topic, Callable[[Change], bool], Partitions | None]
"""What a subscription follows by one watch: its topic, which of its changes it shows, and
where a replay reads (None: the tenant's partitions)."""


def opened(ctx: Any, watch: Watch, name: str, values: dict[str, Any]) -> Followed:
    """What the caller of `ctx` follows by `watch` given its key or pattern arguments
    (`values`, by parameter), once its rule lets the caller (else FORBIDDEN), before
    anything is read."""
    if getattr(ctx, "realtime", None) is None:
        raise BadArgument("subscriptions are served over WebSocket, at /graphql")
    caller = ctx.session.caller
    if caller is not None and watch.guard is not None:
        owners = {owner: values.get(owner) for owner in watch.guard.owners}
        if not watch.guard.function(caller, **owners):
            raise Forbidden("not allowed to read this item")
    return _followed(watch, name, ctx.realtime.table, ctx.tenant, values)


def following(
    ctx: Any, after: str | None, followed: list[Followed]
) -> AsyncGenerator[tuple[Change, str]]:
    """The changes of each of `followed` (none twice) after the cursor `after` (None: from
    now), each with its cursor; INVALID_CURSOR, before anything is read, for a cursor that
    is not the tenant's; a cursor older than the stream keeps is told TRIMMED (`notify`),
    then the oldest changes kept follow."""
    realtime: Realtime = ctx.realtime
    frontier = None if after is None else realtime.cursors.decode(ctx.tenant, after)
    topics = list(dict.fromkeys(topic for topic, _visible, _within in followed))
    heads = [within for _topic, _visible, within in followed]
    table = realtime.table
    within = Partitions(table.partition_key, realtime.tenant_heads(ctx.tenant))
    if None not in heads:
        within = Partitions(table.partition_key, tuple(k for w in heads if w for k in w.keys))

    def visible(change: Change) -> bool:
        return any(t in change.topics and shows(change) for t, shows, _within in followed)

    async def trimmed() -> None:
        await ctx.notify(TRIMMED)

    return follow(
        realtime.hub,
        realtime.cursors,
        ctx.tenant,
        topics[0],
        frontier,
        visible if len(followed) > 1 else followed[0][1],
        within=within,
        pay=realtime.pay(ctx.tenant),
        trimmed=trimmed,
        also=tuple(topics[1:]),
        started=ctx.started,
    )


def _followed(
    watch: Watch, name: str, table: TableDef, tenant: str, values: dict[str, Any]
) -> Followed:
    """What a subscription follows by `watch`. A pattern's subscription shows a change to
    an item that was or is in the range the pattern reads, so one leaving it is seen."""
    if watch.key is not None:
        key = watch.key(tenant, *values.values())
        partition = str(key[table.partition_key])
        everything = Partitions(table.partition_key, (partition,))
        return (watch.entity_type, _key_text(table, key)), lambda _change: True, everything
    assert watch.plan is not None
    plan = watch.plan(tenant, *values.values(), limit=1)
    on, by = _partition_attribute(table, watch.index), _sort_attribute(table, watch.index)

    def read(image: Item) -> bool:
        if image.get(on) != plan.partition:
            return False
        sort = None if by is None else image.get(by)
        return plan.sort is None or (isinstance(sort, str) and plan.sort.holds(sort))

    def visible(change: Change) -> bool:
        return any(read(image) for image in change.images)

    within = Partitions(table.partition_key, (plan.partition,)) if watch.index is None else None
    return (name, plan.partition), visible, within


def _subscriber(watch: Watch, name: str, shown: str) -> Callable[..., Any]:
    async def subscribe(
        _source: Any, info: Any, after: str | None = None, **given: Any
    ) -> AsyncGenerator[dict[str, Any]]:
        """Decides before anything is read (the rule, the cursor), then follows."""
        ctx = info.context
        values = arguments(watch.args, given)
        changes = following(ctx, after, [opened(ctx, watch, name, values)])
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

"""A change fanned out to the subscriptions of one topic that would make the same payload of
it (the same operation, variables, tenant and caller: events.py's share key): a group of
them holds one feed at the hub and one task, not one woken task a subscriber. For each
change the group checks once that the caller may see it, takes every subscriber's cost from
the tenant's budget at once, resolves and serializes the payload once, and writes each
subscriber's `next` message straight to its socket.

A subscriber the group cannot serve so gets the change on its own feed, and its own task
sends it as any subscription's: one still replaying or sending, one whose cursor differs
from the others' (after a resume), one whose socket cannot take the message at once, all of
them when the budget lacks their cost, when the payload may not be shared or could not be
made. So each subscriber still gets its changes in stream order, at least once, each
charged and each with its own cursor."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson

from keygraph.realtime.changes import Change, Topic
from keygraph.realtime.cursors import EventCursors
from keygraph.realtime.feed import Feed, Feeds
from keygraph.realtime.follow import has, live_cursor
from keygraph.realtime.hub import Hub
from server.realtime.context import Seat
from server.realtime.events import Events
from server.realtime.frames import text_frame

SendNow = Callable[[bytes], bool]
"""Writes one frame (frames.py's) to the subscriber's socket if it can at once; False if
not."""
SEND_NOW = "keygraph.websocket.send_now"
"""The ASGI scope's extension, where a WebSocket protocol offers one, that writes a text message's
frame at once if the socket takes it (a SendNow); without it, none is."""


class Member:
    """One subscription of a group: its own feed, how its events are made, and its socket."""

    __slots__ = ("event", "events", "feed", "head", "send_now", "visible")

    def __init__(
        self,
        events: Events,
        op_id: str,
        send_now: SendNow,
        visible: Callable[[Change], bool],
        event: Callable[[Change, str], Any],
    ) -> None:
        self.events = events
        self.send_now = send_now
        self.visible = visible
        self.event = event
        """The event the payload resolves from: the change and its cursor."""
        self.head = b'{"type":"next","id":' + orjson.dumps(op_id) + b',"payload":'
        self.feed: Feed | None = None


class Fanout:
    """The groups of one worker, by topic and share key."""

    def __init__(self, hub: Hub, cursors: EventCursors) -> None:
        self.hub = hub
        self.cursors = cursors
        self._groups: dict[tuple[Topic, bytes], Group] = {}

    @property
    def seated(self) -> int:
        """The subscriptions whose feeds are open in a group."""
        return sum(len(group.members) for group in self._groups.values())

    def seats(self, events: Events, op_id: str, send_now: SendNow) -> Seat:
        """Where the subscription `op_id` whose events are `events` opens its feed: in its
        group, its messages written with `send_now`."""

        def seat(visible: Callable[[Change], bool], event: Callable[[Change, str], Any]) -> Feeds:
            return Place(self, Member(events, op_id, send_now, visible, event))

        return seat

    def _join(self, member: Member, feed: Feed) -> Group:
        key = (feed.topic, member.events.share)
        group = self._groups.get(key)
        if group is None:
            group = Group(self, key, self.hub.open(feed.tenant, feed.topic))
            self._groups[key] = group
        member.feed = feed
        group.members[member] = None
        return group

    def _leave(self, member: Member, group: Group) -> None:
        del group.members[member]
        if not group.members:
            self._drop(group)

    def _drop(self, group: Group) -> None:
        """Ends a group: its feed at the hub is closed, and the next member opens another."""
        if self._groups.get(group.key) is group:
            del self._groups[group.key]
        group.stop()


class Place:
    """A subscription's place in its group, opened and closed as follow() opens its feed."""

    __slots__ = ("fanout", "group", "member")

    def __init__(self, fanout: Fanout, member: Member) -> None:
        self.fanout = fanout
        self.member = member
        self.group: Group | None = None

    def open(self, tenant: str, topic: Topic) -> Feed:
        feed = Feed(tenant, topic)
        self.group = self.fanout._join(self.member, feed)
        return feed

    def close(self, feed: Feed) -> None:
        if self.group is not None:
            self.fanout._leave(self.member, self.group)
            self.group = None


class Group:
    """The subscriptions of one topic and share key: their feed at the hub and its task."""

    def __init__(self, fanout: Fanout, key: tuple[Topic, bytes], feed: Feed) -> None:
        self.fanout = fanout
        self.key = key
        self.feed = feed
        self.members: dict[Member, None] = {}
        self._task = asyncio.create_task(self._run(), name="keygraph-fanout")

    def stop(self) -> None:
        self._task.cancel()
        self.fanout.hub.close(self.feed)

    async def _run(self) -> None:
        while True:
            change = await self.feed.next()
            if change is None:  # this task fell behind: so has every member
                self.fanout._drop(self)
                for member in self.members:
                    assert member.feed is not None
                    member.feed.lose()
                return
            await self._deliver(change)

    async def _deliver(self, change: Change) -> None:
        ready = self._ready(change)
        if not ready:
            return
        first, cursor = ready[0], live_cursor(self.fanout.cursors, change, {})
        meter = first.events.meter
        if meter is not None and not meter.take_many(len(ready)):
            _offer(ready, change)  # each takes its own: those it finds short end throttled
            return
        try:
            (body, objects), shared = await first.events.payload(first.event(change, cursor))
        except Exception:  # each resolves its own, and ends as it would
            if meter is not None:
                meter.settle(0, len(ready))
            _offer(ready, change)
            return
        frames: dict[bytes, bytes] = {}  # by head: one frame for each subscription id
        sent = 0
        for member in ready if shared else ready[:1]:
            frame = frames.get(member.head)
            if frame is None:
                frame = frames[member.head] = text_frame(member.head + body + b"}")
            feed = member.feed
            assert feed is not None
            if feed.idle and member.send_now(frame):
                member.events.sent += 1
                sent += 1
            else:
                feed.offer(change)
        if not shared:
            _offer(ready[1:], change)
        if meter is not None:
            meter.settle(objects, sent)
            meter.settle(0, len(ready) - sent)

    def _ready(self, change: Change) -> list[Member]:
        """The members this task may send `change` to itself; the others get it on their
        feeds, and those it is not for (the caller may not see it, or has it) get nothing."""
        ready: list[Member] = []
        visible: bool | None = None
        cursor: str | None = None
        for member in self.members:
            feed = member.feed
            assert feed is not None
            if not feed.idle:
                feed.offer(change)
                continue
            if visible is None:  # one caller for every member
                visible = member.visible(change)
            if not visible:
                continue
            if feed.had:  # resumed: its cursor may hold more than the reader's frontier
                if has(feed.had, change):
                    continue
                if cursor is None:
                    cursor = live_cursor(self.fanout.cursors, change, {})
                if live_cursor(self.fanout.cursors, change, feed.had) != cursor:
                    feed.offer(change)
                    continue
            ready.append(member)
        return ready


def _offer(members: list[Member], change: Change) -> None:
    for member in members:
        assert member.feed is not None
        member.feed.offer(change)

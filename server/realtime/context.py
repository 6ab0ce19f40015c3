"""The context a subscription's resolvers see: a query's Context (tenant, caller, sessions,
loaders) plus the hub that feeds it, the event cursors, how to tell the client of a notice
that is no event (events trimmed past its cursor), the change of the event being resolved,
the meter its work is charged to, and where its feed opens."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from keygraph.realtime.changes import Change
from keygraph.realtime.cursors import EventCursors
from keygraph.realtime.feed import Feeds
from keygraph.realtime.hub import Hub
from server.graphql.context import Context
from server.realtime.metered import Meter

Seat = Callable[[Callable[[Change], bool], Callable[[Change, str], Any]], Feeds]
"""Opens a subscription's feed among those that share its events (server/realtime/fanout.py),
given who may see a change and the event made of a change and its cursor."""


async def _ignore(_error: dict[str, Any]) -> None:
    return None


@dataclass
class SubscriptionContext(Context):
    hub: Hub | None = None
    cursors: EventCursors | None = None
    notify: Callable[[dict[str, Any]], Awaitable[None]] = field(default=_ignore)
    """Sends the client a `next` message carrying this GraphQL error, and no data."""
    change: Change | None = None
    """The change of the event being resolved."""
    meter: Meter | None = None
    """Charges the subscription's work (its events, its replay) to its tenant's budget."""
    seat: Seat | None = None
    """Where the subscription's feed opens; None: at the hub."""

"""Loads the fields a page of users is asked for, for all its users at once, before the
users resolve: each user's `orders` and `groups` then answer from the request's loaders at
once, without the task and futures per user and field that awaiting them would cost. The
store calls are the ones the fields would have made, in the same waves. Nothing is loaded
ahead when batching is off (the naive baseline)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any

from generated.models.membership import Membership
from keygraph.page import Page
from server.graphql import loaders, lookahead
from server.graphql.context import Context, Info


async def user_fields(info: Info, user_ids: Sequence[str]) -> None:
    """Loads what `edges { node { ... } }` of a page of these users asks of each user.
    Failures are left in the loaders: each user's field meets its own."""
    ctx = info.context
    if not ctx.batching or not user_ids:
        return
    loads: list[Awaitable[Any]] = []
    for name, args in lookahead.selected(info, ("edges", "node"), "User"):
        first, after = args.get("first"), args.get("after")
        if name == "orders":
            from_, to = args.get("from"), args.get("to")
            if from_ is not None and to is not None and from_ > to:
                continue  # each user's field reports the bad range
            orders = loaders.orders_of_user(ctx)
            loads += [orders.load((user_id, first, after, from_, to)) for user_id in user_ids]
        elif name == "groups":
            memberships = loaders.memberships_of_user(ctx)
            pages = [memberships.load((user_id, first, after)) for user_id in user_ids]
            loads.append(_groups(ctx, pages))
    await asyncio.gather(*loads, return_exceptions=True)


async def _groups(ctx: Context, loading: list[Awaitable[Page[Membership]]]) -> None:
    """The groups of the membership pages `loading`, once they have arrived. The pages are
    asked for before this runs, so that they go out with the orders, in the same wave."""
    pages = await asyncio.gather(*loading, return_exceptions=True)
    groups = loaders.groups(ctx)
    await asyncio.gather(
        *(
            groups.load(membership.group_id)
            for page in pages
            if not isinstance(page, BaseException)
            for membership in page.items
        ),
        return_exceptions=True,
    )

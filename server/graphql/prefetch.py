"""Loads the fields a page of users is asked for, for all its users at once, before the
users resolve: each user's `orders` and `groups` then answer from the request's loaders at
once (orders only of the users whose orders the caller may read: the others are refused
without a read), without the task and futures per user and field that awaiting them would cost. The
store calls are the ones the fields would have made, in the same waves. Nothing is loaded
ahead when batching is off (the naive baseline), nor for a response read in parts, whose
users' fields load a part at a time (keygraph/serve/parted.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any

from generated.models.membership import Membership
from generated.models.user import User as UserModel
from keygraph.errors import BadArgument
from keygraph.page import Page
from server.authz.fields import may_read_orders
from server.domain.groups import groups_page
from server.graphql import loaders, lookahead
from server.graphql.context import Context, Info


async def user_fields(info: Info, users: Sequence[UserModel]) -> None:
    """Loads what `edges { node { ... } }` of a page of these users asks of each user.
    Failures are left in the loaders: each user's field meets its own."""
    ctx = info.context
    if not ctx.batching or not users or ctx.stream is not None:
        return
    loads: list[Awaitable[Any]] = []
    for name, args in lookahead.selected(info, ("edges", "node"), "User"):
        first, after = args.get("first"), args.get("after")
        if name == "orders":
            from_, to = args.get("from"), args.get("to")
            if from_ is not None and to is not None and from_ > to:
                continue  # each user's field reports the bad range
            orders = loaders.orders_of_user(ctx)
            loads += [
                orders.load_ahead((user.user_id, first, after, from_, to))
                for user in users
                if may_read_orders(ctx.caller, user.user_id, from_, to)
            ]
        elif name == "groups":
            loads += _group_loads(ctx, users, first, after)
    await _settled(loads)


async def _settled(loads: list[Awaitable[Any]]) -> None:
    """Waits for the loads without cancelling them when the wait is cancelled, on a waiter
    that holds no result: the handle that resumes the request keeps what it waited on alive
    while everything after runs, and a gathered list of pages would stay with it."""
    futures = [asyncio.ensure_future(load) for load in loads]
    if not futures:
        return
    await asyncio.wait(futures)
    for future in futures:
        if not future.cancelled():
            future.exception()  # retrieved: each field meets its own failure


def _group_loads(
    ctx: Context, users: Sequence[UserModel], first: int | None, after: str | None
) -> list[Awaitable[Any]]:
    """The groups of each user's first page, from the group ids its item keeps; the pages of
    memberships (and then their groups) of the others."""
    groups = loaders.groups(ctx)
    memberships = loaders.memberships_of_user(ctx)
    ids: list[str] = []
    pages = []
    for user in users:
        if user.group_ids is None or after is not None:
            pages.append(memberships.load_ahead((user.user_id, first, after)))
            continue
        try:
            ids += groups_page(ctx.session, ctx.tenant, user.user_id, user.group_ids, first).items
        except BadArgument:
            return []  # each user's field reports the bad `first`
    found: list[Awaitable[Any]] = [groups.load_ahead(key) for key in dict.fromkeys(ids)]
    if pages:
        found.append(_groups(ctx, pages))
    return found


async def _groups(ctx: Context, loading: list[Awaitable[Page[Membership]]]) -> None:
    """The groups of the membership pages `loading`, once they have arrived. The pages are
    asked for before this runs, so that they go out with the orders, in the same wave."""
    pages = await asyncio.gather(*loading, return_exceptions=True)
    groups = loaders.groups(ctx)
    wanted = dict.fromkeys(
        membership.group_id
        for page in pages
        if not isinstance(page, BaseException)
        for membership in page.items
    )
    await asyncio.gather(*(groups.load_ahead(key) for key in wanted), return_exceptions=True)

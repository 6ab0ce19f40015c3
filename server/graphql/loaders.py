"""The request's DataLoaders for users, orders and groups.

Entity loads batch into BatchGetItem calls (deduplicated, in chunks of 100, answered in the
order asked). Item-collection queries are loaded by (pattern, arguments): the queries of many
parents asked for in one tick go out together (concurrently, or one after another on a store
that answers inline, where tasks would only add cost), and an identical query runs once per
request. A loader lives in its request's Context, so its cache never crosses requests or
tenants.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from datetime import UTC, datetime
from typing import TypeVar

from strawberry.dataloader import DataLoader

from generated.models.address import Address as AddressModel
from generated.models.group import Group as GroupModel
from generated.models.membership import Membership
from generated.models.user import User as UserModel
from generated.models.user_order import UserOrder
from generated.queries.group import get_groups
from generated.queries.membership import group_members, user_groups
from generated.queries.user import get_users
from generated.queries.user_order import user_orders, user_orders_between
from keygraph.page import Page
from keygraph.stores.counting import CountingStore
from server.domain.addresses import user_and_addresses
from server.graphql.context import Context, SharedLoader

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _queries(ctx: Context, name: str, run: Callable[[K], Awaitable[V]]) -> SharedLoader[K, V]:
    """A loader running one query per distinct key, all of a batch in one wave."""

    async def load(keys: Sequence[K]) -> list[V | BaseException]:
        store = ctx.session.store
        if isinstance(store, CountingStore) and store.answers_inline:
            with store.one_wave():
                return [await _outcome(run(key)) for key in keys]
        return list(await asyncio.gather(*(run(key) for key in keys), return_exceptions=True))

    return ctx.loader(name, load)


async def _outcome(call: Awaitable[V]) -> V | BaseException:
    try:
        return await call
    except Exception as exc:
        return exc


def settled(loader: DataLoader[K, V], key: K) -> asyncio.Future[V] | None:
    """The loader's future for `key` if it has already succeeded: a field can then resolve
    at once, with no task or future of its own."""
    if not loader.cache:  # the naive baseline's loaders remember nothing
        return None
    future = loader.cache_map.get(key)
    if future is None or not future.done() or future.cancelled() or future.exception():
        return None
    return future


def addresses_of_user(ctx: Context) -> DataLoader[str, list[AddressModel]]:
    """A user's addresses: one Query on its item collection per user."""

    async def run(user_id: str) -> list[AddressModel]:
        _, addresses = await user_and_addresses(ctx.session, ctx.tenant, user_id)
        return addresses

    return _queries(ctx, "addresses_of_user", run)


def users(ctx: Context) -> DataLoader[str, UserModel | None]:
    async def load(ids: Sequence[str]) -> list[UserModel | None]:
        return await get_users(ctx.session, ctx.tenant, ids)

    return ctx.loader("get_users", load)


def groups(ctx: Context) -> SharedLoader[str, GroupModel | None]:
    async def load(ids: Sequence[str]) -> list[GroupModel | None]:
        return await get_groups(ctx.session, ctx.tenant, ids)

    return ctx.loader("get_groups", load)


EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)

OrdersKey = tuple[str, int | None, str | None, datetime | None, datetime | None]
"""(user id, first, after, from, to) of one user's orders page."""


def orders_of_user(ctx: Context) -> SharedLoader[OrdersKey, Page[UserOrder]]:
    async def run(key: OrdersKey) -> Page[UserOrder]:
        user_id, first, after, from_, to = key
        if from_ is None and to is None:
            return await user_orders(ctx.session, ctx.tenant, user_id, first=first, after=after)
        return await user_orders_between(
            ctx.session,
            ctx.tenant,
            user_id,
            from_=from_ or EARLIEST,
            to=to or LATEST,
            first=first,
            after=after,
        )

    return _queries(ctx, "user_orders", run)


PageKey = tuple[str, int | None, str | None]
"""(parent id, first, after) of one page of an item collection."""


def memberships_of_user(ctx: Context) -> SharedLoader[PageKey, Page[Membership]]:
    async def run(key: PageKey) -> Page[Membership]:
        user_id, first, after = key
        return await user_groups(ctx.session, ctx.tenant, user_id, first=first, after=after)

    return _queries(ctx, "user_groups", run)


def memberships_of_group(ctx: Context) -> DataLoader[PageKey, Page[Membership]]:
    async def run(key: PageKey) -> Page[Membership]:
        group_id, first, after = key
        return await group_members(ctx.session, ctx.tenant, group_id, first=first, after=after)

    return _queries(ctx, "group_members", run)

"""Page sizes, cursors, batched reads and running query plans to their limit: what every
generated query function shares."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Any, TypeVar

from .errors import BadArgument, InvalidCursor
from .page import Page
from .plan import BatchGet, Floats, Item, Key, Query, TableDef
from .store import Session, Store, query_each

BATCH_GET_LIMIT = 100
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PageSize:
    """A query pattern's page sizes: `default` when `first` is left out, at most `maximum`."""

    default: int
    maximum: int

    def size(self, first: int | None) -> int:
        """The page size `first` asks for; BadArgument when it is out of range."""
        if first is None:
            return self.default
        if first < 0 or first > self.maximum:
            raise BadArgument(f"first must be between 0 and {self.maximum}, got {first}")
        return first


def start_key(
    s: Session, after: str | None, tenant: str, pattern: str, args: Mapping[str, Any]
) -> dict[str, str] | None:
    if after is None:
        return None
    position = s.cursors.decode(after, tenant, pattern, args)
    key = position.get("k")
    if not isinstance(key, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in key.items()
    ):
        raise InvalidCursor("cursor is malformed")
    return key


def _key_getter(names: Sequence[str]) -> Callable[[Item], tuple[Any, ...]]:
    """The values of `names` in an item, as a tuple (itemgetter's, one C call an item)."""
    if len(names) == 1:
        name = names[0]
        return lambda item: (item[name],)
    return itemgetter(*names)


def page_of(
    s: Session,
    items: list[Item],
    limit: int,
    convert: Callable[[Item], T | None],
    key_attributes: Sequence[str],
    tenant: str,
    pattern: str,
    args: Mapping[str, Any],
) -> Page[T]:
    """The page of the first `limit` items, converted (an item converting to None is left
    out). Queries ask for limit + 1 items, so a next page exists only when an item follows;
    cursors (after the page, after each item) are signed only when asked for, from the key
    values the page keeps of each item: not the items, which a page held until the end of
    its request would keep alive."""
    key_of = _key_getter(key_attributes)
    kept = [(entry, key_of(item)) for item in items[:limit] if (entry := convert(item)) is not None]
    last = items[limit - 1] if 0 < limit <= len(items) else None
    after_last = None if last is None else key_of(last)

    def cursor_of(values: tuple[Any, ...] | None) -> str:
        if values is None:
            raise IndexError("no item ends the page")
        key = dict(zip(key_attributes, values, strict=True))
        return s.cursors.encode(tenant, pattern, args, {"k": key})

    return Page(
        [entry for entry, _ in kept],
        len(items) > limit > 0,
        lambda index: cursor_of(kept[index][1]),
        lambda: cursor_of(after_last),
    )


async def get_many(
    store: Store, table: TableDef, keys: Sequence[Key], floats: Floats = frozenset()
) -> list[Item | None]:
    """BatchGetItem for any number of keys: deduplicated, in chunks of 100 sent together,
    answered in the order asked (None where no item exists), the numbers named in `floats`
    as floats."""
    pk, sk = table.partition_key, table.sort_key
    pairs = [(key[pk], key[sk]) for key in keys]
    wanted: Sequence[Key] = keys
    if len(set(pairs)) != len(pairs):
        wanted = [{pk: p, sk: s} for p, s in dict.fromkeys(pairs)]
    calls = [
        store.batch_get(BatchGet(tuple(wanted[i : i + BATCH_GET_LIMIT]), floats))
        for i in range(0, len(wanted), BATCH_GET_LIMIT)
    ]
    # the first chunk is awaited here, the others in tasks started first: a task of its own
    # would start the first a turn of the event loop later, after loads asked for beside it
    others = [asyncio.ensure_future(call) for call in calls[1:]]
    try:
        results = [await calls[0]] if calls else []
        results += [await other for other in others]
    except BaseException:
        for other in others:
            other.cancel()
        raise
    found = {(item[pk], item[sk]): item for result in results for item in result}
    return [found.get(pair) for pair in pairs]


async def collect(s: Session, plan: Query) -> list[Item]:
    """The plan's first `limit` items (all when limit is None), following continuation keys:
    a store may end a page early (DynamoDB stops at 1 MB) and say where to go on."""
    items: list[Item] = []
    while True:
        result = await s.store.query(plan)
        items.extend(result.items)
        if result.last_key is None or (plan.limit is not None and len(result.items) >= plan.limit):
            return items
        remaining = None if plan.limit is None else plan.limit - len(result.items)
        plan = replace(plan, start=result.last_key, limit=remaining)


async def collect_all(s: Session, plans: Sequence[Query]) -> list[list[Item]]:
    """Every item of each plan, whose limit sizes its pages: the first pages of all read
    together (query_each: one statement on the embedded store), any later page plan by
    plan, following continuation keys."""
    found: list[list[Item]] = []
    for plan, first in zip(plans, await query_each(s.store, plans), strict=True):
        items, last_key = list(first.items), first.last_key
        while last_key is not None:
            more = await s.store.query(replace(plan, start=last_key))
            items += more.items
            last_key = more.last_key
        found.append(items)
    return found


async def collect_merged(s: Session, plans: Sequence[Query], order: Sequence[str]) -> list[Item]:
    """Runs the plans (one per shard of a write-sharded pattern) concurrently and merges their
    items by the `order` attributes in the plans' direction; the first `limit` of the merge."""
    results = await asyncio.gather(*(collect(s, plan) for plan in plans))
    merged = sorted(
        (item for result in results for item in result),
        key=lambda item: tuple(item[name] for name in order),
        reverse=not plans[0].forward,
    )
    return merged if plans[0].limit is None else merged[: plans[0].limit]

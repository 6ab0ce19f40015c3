"""Page sizes, cursors and batched reads shared by generated query functions."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import BadArgument, InvalidCursor
from .plan import BatchGet, Item, Key, TableDef
from .store import Session, Store

BATCH_GET_LIMIT = 100


def page_size(first: int | None, default: int, maximum: int) -> int:
    if first is None:
        return default
    if first < 0 or first > maximum:
        raise BadArgument(f"first must be between 0 and {maximum}, got {first}")
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


def next_cursor(
    s: Session,
    items: list[Item],
    limit: int,
    key_attributes: Sequence[str],
    tenant: str,
    pattern: str,
    args: Mapping[str, Any],
) -> str | None:
    """Queries ask for limit + 1 items: a cursor exists only when an item follows."""
    if len(items) <= limit or limit == 0:
        return None
    last = items[limit - 1]
    key = {name: last[name] for name in key_attributes}
    return s.cursors.encode(tenant, pattern, args, {"k": key})


async def get_many(store: Store, table: TableDef, keys: Sequence[Key]) -> list[Item | None]:
    """BatchGetItem for any number of keys: deduplicated, in chunks of 100 sent together,
    answered in the order asked (None where no item exists)."""
    pk, sk = table.partition_key, table.sort_key
    wanted = list(dict.fromkeys((key[pk], key[sk]) for key in keys))
    chunks = [wanted[i : i + BATCH_GET_LIMIT] for i in range(0, len(wanted), BATCH_GET_LIMIT)]
    results = await asyncio.gather(
        *(store.batch_get(BatchGet(tuple({pk: p, sk: s} for p, s in chunk))) for chunk in chunks)
    )
    found = {(item[pk], item[sk]): item for result in results for item in result}
    return [found.get((key[pk], key[sk])) for key in keys]

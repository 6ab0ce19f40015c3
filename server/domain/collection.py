"""Reading the items a change must see: strongly consistent on the table, a page at a time."""

from __future__ import annotations

from dataclasses import replace

from generated.table import TABLE
from keygraph.plan import Delete, Item, Key, Query
from keygraph.store import Session

PAGE = 100


async def first_page(s: Session, plan: Query, limit: int = PAGE) -> list[Item]:
    """The first `limit` items `plan` reads, strongly consistent where the index allows
    (the table; DynamoDB's global secondary indexes are eventually consistent)."""
    plan = replace(plan, consistent=plan.index is None, limit=limit, start=None)
    return (await s.store.query(plan)).items


async def read_all(s: Session, plan: Query) -> list[Item]:
    """Every item `plan` reads, all pages, strongly consistent where the index allows."""
    plan = replace(plan, consistent=plan.index is None, limit=PAGE)
    items: list[Item] = []
    start: Key | None = None
    while True:
        result = await s.store.query(replace(plan, start=start))
        items.extend(result.items)
        if result.last_key is None:
            return items
        start = result.last_key


def delete_of(item: Item) -> Delete:
    """Deleting an item read from the table or an index (its primary key is in both)."""
    return Delete(TABLE.primary_key(item))

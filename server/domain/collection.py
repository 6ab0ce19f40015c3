"""Reading the items a change must see: strongly consistent on the table, a page at a time."""

from __future__ import annotations

from dataclasses import replace

from generated.table import TABLE
from keygraph.plan import Delete, Item, Query
from keygraph.store import Session

PAGE = 100


async def first_page(s: Session, plan: Query, limit: int = PAGE) -> list[Item]:
    """The first `limit` items `plan` reads, strongly consistent where the index allows
    (the table; DynamoDB's global secondary indexes are eventually consistent)."""
    plan = replace(plan, consistent=plan.index is None, limit=limit, start=None)
    return (await s.store.query(plan)).items


def delete_of(item: Item) -> Delete:
    """Deleting an item read from the table or an index (its primary key is in both)."""
    return Delete(TABLE.primary_key(item))

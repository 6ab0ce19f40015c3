"""The one interface every storage backend implements, and the per-request session."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .caller import Caller
from .cursor import CursorCodec
from .plan import (
    BatchGet,
    Delete,
    Get,
    Item,
    Put,
    Query,
    QueryResult,
    Scan,
    Update,
    WriteAction,
)


class Store(Protocol):
    """DynamoDB's read and write operations over one table, speaking plans.

    Limits are DynamoDB's: 100 keys per batch_get, 25 actions per batch_write, 100 actions
    per transaction, 400 KB per item; beyond them a store raises ValidationError.
    """

    async def get(self, plan: Get) -> Item | None: ...

    async def batch_get(self, plan: BatchGet) -> list[Item]: ...

    async def query(self, plan: Query) -> QueryResult: ...

    async def scan(self, plan: Scan) -> QueryResult:
        """For table migrations only: serving reads are GetItem, BatchGetItem and Query."""
        ...

    async def put(self, plan: Put) -> None: ...

    async def update(self, plan: Update) -> Item: ...

    async def delete(self, plan: Delete) -> None: ...

    async def batch_write(self, actions: Sequence[Put | Delete]) -> None: ...

    async def transact_write(
        self, actions: Sequence[WriteAction], token: str | None = None
    ) -> None:
        """All the actions or none. A `token` (DynamoDB's ClientRequestToken, 1-36
        characters) makes it idempotent for ten minutes: sent again with the same actions it
        succeeds without writing; with other actions it is refused."""
        ...

    async def close(self) -> None: ...


async def query_each(store: Store, plans: Sequence[Query]) -> list[QueryResult]:
    """Each plan's Query result, in order: by the store's `query_many` where it has one (the
    embedded store reads them in one statement; views pass it on, one call a plan), else
    one Query a plan, all sent together."""
    many = getattr(store, "query_many", None)
    if many is not None:
        found: list[QueryResult] = await many(plans)
        return found
    return list(await asyncio.gather(*(store.query(plan) for plan in plans)))


@dataclass(frozen=True, slots=True)
class Session:
    """What a generated query function runs on: a store, the cursor codec, and who the reads
    are for. A package generated from a spec with access rules asks the pattern's guard
    (generated/authz.py) with `caller` and the arguments before any store call, and raises
    Forbidden when it refuses; with no caller, the server reads for itself."""

    store: Store
    cursors: CursorCodec
    caller: Caller | None = None

"""Idempotency-Key and requests refused before they run: a request throttled by its tenant's
budget, or failing to parse, validate or coerce its variables, writes nothing for its key; on
each store."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from generated.table import TABLE
from keygraph.plan import Delete, Put, TableDef, Update
from keygraph.store import Store
from keygraph.stores.view import Forwarding, Planned
from server.auth.tokens import issue_token
from server.domain import cleanup
from server.settings import Limits, Settings
from tests.server.conftest import SECRET, app_of

R = TypeVar("R")
CREATE = "mutation($i: CreateUserInput!) { createUser(input: $i) { id } }"
COSTLY = 'createUser(input: {email: "t@example.org", name: "T"}) { orders(first: 50) { edges '
COSTLY += "{ node { id } } } }"
_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


class Written(Forwarding):
    """Counts the writes that reach the store: all of them, and those of Idempotency-Key
    records (the ledger puts, updates and deletes them one by one)."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.writes = 0
        self.records = 0

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        self.writes += kind in _WRITES
        return await call()

    def _count(self, key: Mapping[str, Any]) -> None:
        self.records += "#IDEMPOTENCY#" in str(key["PK"])

    async def put(self, plan: Put) -> None:
        self._count(plan.item)
        await super().put(plan)

    async def update(self, plan: Update) -> dict[str, Any]:
        self._count(plan.key)
        return await super().update(plan)

    async def delete(self, plan: Delete) -> None:
        self._count(plan.key)
        await super().delete(plan)


@dataclass
class Tight:
    """The app on one store, its tenant's budget 15 points (a createUser asks for 11 and
    gives back those it did not use), refilled by one point in 1,000 s."""

    client: httpx.AsyncClient
    store: Written
    token: str

    async def create(self, key: str | None, email: str | None = None) -> httpx.Response:
        """createUser with `email` or a fresh one, under `key` when given."""
        headers = {"Authorization": f"Bearer {self.token}"}
        if key is not None:
            headers["Idempotency-Key"] = key
        email = email or f"{uuid.uuid4().hex}@example.org"
        body = {"query": CREATE, "variables": {"i": {"email": email, "name": "N"}}}
        return await self.client.post("/graphql", json=body, headers=headers)

    async def remaining(self) -> int:
        """The tenant's budget, as a request of `viewer` (always charged alike) reports it."""
        headers = {"Authorization": f"Bearer {self.token}"}
        answer = await self.client.post(
            "/graphql", json={"query": "{ viewer { tenant } }"}, headers=headers
        )
        remaining: int = answer.json()["extensions"]["cost"]["budget"]["remaining"]
        return remaining


@pytest.fixture
async def tight(
    kind: str,
    store_factory: Callable[[str, TableDef], Awaitable[Store]],
    tmp_path: Path,
) -> AsyncIterator[Tight]:
    limits = Limits(max_cost=15, tenant_budget=15, tenant_refill=0.001)
    settings = Settings(data_dir=tmp_path, jwt_secret=SECRET, limits=limits).resolved()
    store = Written(await store_factory(kind, TABLE))
    transport = httpx.ASGITransport(app=app_of(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield Tight(client, store, issue_token(settings, "acme", "alice", roles=["admin"]))
    await cleanup.stop()


def code(response: httpx.Response) -> str:
    code: str = response.json()["errors"][0]["extensions"]["code"]
    return code


async def test_throttled_mutations_write_nothing_for_their_keys(tight: Tight) -> None:
    admitted = await tight.create(f"k-{uuid.uuid4()}")
    assert admitted.status_code == 200, admitted.text
    assert tight.store.records == 2  # claimed, then kept
    for _ in range(20):
        if (await tight.create(None)).status_code == 429:
            break
    else:
        pytest.fail("the tenant's budget never ran out")

    writes, records = tight.store.writes, tight.store.records
    for _ in range(20):
        throttled = await tight.create(f"k-{uuid.uuid4()}")
        assert (throttled.status_code, code(throttled)) == (429, "THROTTLED")
    assert (tight.store.writes, tight.store.records) == (writes, records)


@pytest.mark.parametrize(
    ("query", "variables", "expected"),
    [
        ("mutation { createUser(", None, "GRAPHQL_VALIDATION_FAILED"),
        ("mutation { createUser { id } }", None, "GRAPHQL_VALIDATION_FAILED"),
        (CREATE, {"i": {"email": "x@example.org"}}, "BAD_USER_INPUT"),
        (f"mutation {{ {COSTLY} }}", None, "QUERY_TOO_COMPLEX"),
    ],
    ids=["parse", "validation", "variables", "cost"],
)
async def test_a_mutation_refused_before_it_runs_writes_nothing_for_its_key(
    tight: Tight, query: str, variables: dict[str, Any] | None, expected: str
) -> None:
    headers = {"Authorization": f"Bearer {tight.token}", "Idempotency-Key": "k-refused"}
    body = {"query": query, "variables": variables or {}}
    refused = await tight.client.post("/graphql", json=body, headers=headers)
    assert code(refused) == expected
    assert (tight.store.writes, tight.store.records) == (0, 0)


async def test_a_retry_answered_from_the_record_is_charged_nothing(tight: Tight) -> None:
    key = f"k-{uuid.uuid4()}"
    first = await tight.create(key, "first@example.org")
    assert first.json()["extensions"]["cost"]["budget"]["remaining"] < 15
    before = await tight.remaining()
    replayed = await tight.create(key, "first@example.org")
    assert replayed.headers.get("Idempotent-Replayed") == "true"
    reused = await tight.create(key)  # another email: another request under the key
    assert (reused.status_code, code(reused)) == (422, "IDEMPOTENCY_KEY_REUSED")
    after = await tight.remaining()
    assert before - after == after - await tight.remaining()  # the viewer's points alone

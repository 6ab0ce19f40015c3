"""Idempotency-Key: a retry gets the first answer and writes nothing; another request with the
key is refused; a duplicate waits for the first; keys are per tenant; a request the store
failed runs again when it wrote nothing, and is kept unknown when it may have."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from generated.table import TABLE
from keygraph.errors import StoreThrottled, StoreUnavailable
from keygraph.plan import Put
from keygraph.store import Store
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.stores.view import Forwarding, Planned
from server.auth.tokens import issue_token
from server.domain import cleanup
from server.settings import Settings
from tests.server.conftest import Api, World, app_of

R = TypeVar("R")

CREATE = """mutation($i: CreateUserInput!) { createUser(input: $i) { id email } }"""
USERS = "{ users(first: 10) { edges { node { email } } } }"


async def post(world: World, token: str, key: str, email: str, name: str = "N") -> httpx.Response:
    body = {"query": CREATE, "variables": {"i": {"email": email, "name": name}}}
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": key}
    return await world.client.post("/graphql", json=body, headers=headers)


async def emails(world: World, api: Any) -> list[str]:
    data = await api.data(USERS)
    return [edge["node"]["email"] for edge in data["users"]["edges"]]


async def test_a_retry_gets_the_first_answer(world: World) -> None:
    first = await post(world, world.acme.token, "k-1", "ida@example.org")
    again = await post(world, world.acme.token, "k-1", "ida@example.org")
    assert first.status_code == again.status_code == 200
    assert again.json()["data"] == first.json()["data"]
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert await emails(world, world.acme) == ["ida@example.org"]

    other = await post(world, world.acme.token, "k-1", "jon@example.org")
    assert other.status_code == 422
    assert other.json()["errors"][0]["extensions"]["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert await emails(world, world.acme) == ["ida@example.org"]

    # keys are per tenant: globex's k-1 is its own
    theirs = await post(world, world.globex.token, "k-1", "ida@example.org")
    assert "Idempotent-Replayed" not in theirs.headers
    assert await emails(world, world.globex) == ["ida@example.org"]


async def test_a_keyed_answer_is_never_replayed_to_another_caller(
    world: World, settings: Settings
) -> None:
    first = await post(world, world.acme.token, "k-9", "ivy@example.org")
    assert first.json()["data"]["createUser"]["email"] == "ivy@example.org"
    bob = issue_token(settings, "acme", "bob", roles=["admin"])
    theirs = await post(world, bob, "k-9", "ivy@example.org")
    # bob's request runs as bob's own: the email is taken, not alice's answer replayed
    assert "Idempotent-Replayed" not in theirs.headers
    assert [e["extensions"]["code"] for e in theirs.json()["errors"]] == ["CONFLICT"]
    nobody = issue_token(settings, "acme", None, roles=["admin"])
    anonymous = await post(world, nobody, "k-9", "ivy@example.org")
    assert "Idempotent-Replayed" not in anonymous.headers
    again = await post(world, world.acme.token, "k-9", "ivy@example.org")
    assert again.headers.get("Idempotent-Replayed") == "true"


async def test_a_duplicate_in_flight_waits_for_the_first(world: World) -> None:
    answers = await asyncio.gather(
        *(post(world, world.acme.token, "k-2", "kim@example.org") for _ in range(3))
    )
    assert {r.status_code for r in answers} == {200}
    assert len({r.content for r in answers}) == 1
    assert sum(r.headers.get("Idempotent-Replayed") == "true" for r in answers) == 2
    assert await emails(world, world.acme) == ["kim@example.org"]


async def test_a_bad_key_is_refused(world: World) -> None:
    response = await post(world, world.acme.token, "has space", "lou@example.org")
    assert response.status_code == 400
    assert await emails(world, world.acme) == []


class Faulty(Forwarding):
    """The embedded store with DynamoDB's faults injected into the data's writes (not the
    ledger's records): `throttle` throttles that many calls of an operation before they
    run; `lose` runs that many, then fails as a write whose answer was lost."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.throttle: Counter[str] = Counter()
        self.lose: Counter[str] = Counter()

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        if self.throttle[kind]:
            self.throttle[kind] -= 1
            raise StoreThrottled(f"{kind} throttled")
        if self.lose[kind]:
            self.lose[kind] -= 1
            await call()
            raise StoreUnavailable(f"{kind} failed, its outcome unknown", applied=None)
        return await call()

    async def put(self, plan: Put) -> None:
        if "#IDEMPOTENCY#" in str(plan.item["PK"]):
            await self.inner.put(plan)  # the ledger's records
        else:
            await super().put(plan)


@pytest.fixture
async def faulty(settings: Settings, tmp_path: Path) -> AsyncIterator[tuple[Api, Faulty]]:
    embedded = EmbeddedStore(TABLE, path=tmp_path / "faulty.sqlite3")
    store = Faulty(embedded)
    transport = httpx.ASGITransport(app=app_of(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield Api(client, issue_token(settings, "acme", "alice", roles=["admin"])), store
    await cleanup.stop()
    await embedded.close()


SHOP = 'createShop(input: {name: "S", lat: 48.85, lng: 2.35}) { id }'
SHOPS = "{ shopsNear(lat: 48.85, lng: 2.35, radiusKm: 5) { shop { id } } }"


async def keyed(api: Api, query: str, key: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {api.token}", "Idempotency-Key": key}
    return await api.client.post("/graphql", json={"query": query}, headers=headers)


def codes(response: httpx.Response) -> list[str]:
    return [error["extensions"]["code"] for error in response.json().get("errors", ())]


async def test_a_throttled_keyed_mutation_runs_again_on_the_embedded_store(
    faulty: tuple[Api, Faulty],
) -> None:
    api, store = faulty
    store.throttle["TransactWriteItems"] = 1
    create = 'mutation { createUser(input: {email: "a@example.org", name: "A"}) { id } }'
    throttled = await keyed(api, create, "k")
    assert throttled.status_code == 200  # a field the store throttled: not the budget's 429
    [error] = throttled.json()["errors"]
    assert error["extensions"] == {"code": "THROTTLED", "retryAfter": 1}
    retry = await keyed(api, create, "k")
    assert "Idempotent-Replayed" not in retry.headers
    assert retry.json()["data"]["createUser"]["id"]
    assert await emails_of(api) == ["a@example.org"]


async def test_a_keyed_write_whose_answer_was_lost_is_kept_unknown_on_the_embedded_store(
    faulty: tuple[Api, Faulty],
) -> None:
    api, store = faulty
    store.lose["PutItem"] = 1
    assert codes(await keyed(api, f"mutation {{ {SHOP} }}", "k")) == ["STORE_UNAVAILABLE"]
    retry = await keyed(api, f"mutation {{ {SHOP} }}", "k")
    assert (retry.status_code, codes(retry)) == (409, ["IDEMPOTENCY_OUTCOME_UNKNOWN"])
    assert len((await api.data(SHOPS))["shopsNear"]) == 1


async def test_a_keyed_request_that_wrote_before_it_was_throttled_is_kept_unknown(
    faulty: tuple[Api, Faulty],
) -> None:
    """The shop was written, then the user's transaction throttled: running the request
    again would write a second shop."""
    api, store = faulty
    store.throttle["TransactWriteItems"] = 1
    user = 'createUser(input: {email: "a@example.org", name: "A"}) { id }'
    both = f"mutation {{ {SHOP} {user} }}"
    assert codes(await keyed(api, both, "k")) == ["THROTTLED"]
    retry = await keyed(api, both, "k")
    assert (retry.status_code, codes(retry)) == (409, ["IDEMPOTENCY_OUTCOME_UNKNOWN"])
    assert len((await api.data(SHOPS))["shopsNear"]) == 1
    assert await emails_of(api) == []


async def emails_of(api: Api) -> list[str]:
    data = await api.data(USERS)
    return [edge["node"]["email"] for edge in data["users"]["edges"]]

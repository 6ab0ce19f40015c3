"""Idempotency-Key: a retry gets the first answer and writes nothing; another request with the
key is refused; a duplicate waits for the first; keys are per tenant."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import orjson
import pytest

from keygraph.errors import IdempotentParameterMismatch
from keygraph.plan import Get, Update
from server.edge import idempotency, owners
from server.edge.auth import issue_token
from server.edge.idempotency import Answer, Claimed, Ledger, Refused, TokenedStore
from server.settings import Settings
from tests.server.domain.conftest import World

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


async def test_the_ledger(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger(world.store, window=600, request_timeout=30)
    claim = await ledger.claim("acme", "k", "digest-1")
    assert isinstance(claim, Claimed)
    monkeypatch.setattr(idempotency, "WAIT_SECONDS", 0.2)
    running = await ledger.claim("acme", "k", "digest-1")
    assert isinstance(running, Refused)
    assert (running.status, running.code, running.retry_after) == (409, "IN_PROGRESS", 1)

    retry = Ledger(world.store, window=600, request_timeout=30, owner=ended())
    await ledger.keep(claim, Answer(503, "application/json", b"{}"))  # retryable: released
    claim = await retry.claim("acme", "k", "digest-1")  # by a worker that has died since
    assert isinstance(claim, Claimed)
    taken = await ledger.claim("acme", "k", "digest-1")
    assert isinstance(taken, Claimed)
    await retry.keep(claim, Answer(200, "application/json", b"{}"))  # too late: not kept
    await ledger.keep(taken, Answer(503, "application/json", b"{}"))  # retryable: released
    again = await ledger.claim("acme", "k", "digest-1")
    assert isinstance(again, Claimed)
    await ledger.release(again)

    short = Ledger(world.store, window=0, request_timeout=30)
    done = await short.claim("acme", "w", "d")
    assert isinstance(done, Claimed)
    await short.keep(done, Answer(200, "application/json", b'{"data": 1}'))
    await asyncio.sleep(1.1)  # past the window: the key runs again
    rerun = await short.claim("acme", "w", "d")
    assert isinstance(rerun, Claimed)
    await short.release(rerun)


def ended() -> str:
    """The identity of a process of this machine that has ended: ours with an earlier start,
    as when a dead worker's pid has been reused."""
    machine_and_pid, _, started = owners.identity().rpartition("|")
    if not started.isdigit():
        pytest.skip("process start times need Linux's /proc")
    return f"{machine_and_pid}|{int(started) - 1}"


async def test_a_retry_takes_over_at_once_from_a_worker_that_died(world: World) -> None:
    body = {"query": CREATE, "variables": {"i": {"email": "max@example.org", "name": "N"}}}
    died = Ledger(world.store, window=600, request_timeout=30, owner=ended())
    key = idempotency.caller_key("alice", "k-3")
    claim = await died.claim("acme", key, idempotency.digest(orjson.dumps(body)))
    assert isinstance(claim, Claimed)
    started = time.monotonic()
    retry = await post(world, world.acme.token, "k-3", "max@example.org")
    assert retry.status_code == 200, retry.text  # not IN_PROGRESS until the lease lapses
    assert time.monotonic() - started < idempotency.WAIT_SECONDS
    assert await emails(world, world.acme) == ["max@example.org"]
    await died.keep(claim, Answer(200, "application/json", b"{}"))  # too late: not kept
    again = await post(world, world.acme.token, "k-3", "max@example.org")
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json() == retry.json()


async def test_a_lease_lapses_once_its_owner_stops_renewing_it(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(idempotency, "WAIT_SECONDS", 0.3)
    elsewhere = "other-host|boot|pid:[1]|7|100"  # a process this machine cannot see
    owner = Ledger(world.store, window=600, request_timeout=30, lease=0.4, owner=elsewhere)
    claim = await owner.claim("acme", "k", "d")
    assert isinstance(claim, Claimed)
    await asyncio.sleep(0.6)  # past the first lease: renewed meanwhile
    retry = Ledger(world.store, window=600, request_timeout=30)
    assert isinstance(await retry.claim("acme", "k", "d"), Refused)
    owner._stop_renewing(claim)  # its host goes down
    await asyncio.sleep(0.5)
    taken = await retry.claim("acme", "k", "d")
    assert isinstance(taken, Claimed)
    await retry.keep(taken, Answer(200, "application/json", b"{}"))


async def test_transactions_carry_tokens_from_the_key(world: World) -> None:
    """A request's transactions sent again under the same key are written once; other
    transactions under it are refused."""
    key = {"PK": "T#acme#COUNTER", "SK": "C"}
    count = Update(key, add={"n": 1})
    await TokenedStore(world.store, "acme", "k").transact_write([count])
    await TokenedStore(world.store, "acme", "k").transact_write([count])
    item = await world.store.get(Get(key, consistent=True))
    assert item is not None
    assert item["n"] == 1
    with pytest.raises(IdempotentParameterMismatch):
        await TokenedStore(world.store, "acme", "k").transact_write([Update(key, add={"n": 2})])
    await TokenedStore(world.store, "globex", "k").transact_write([count])
    item = await world.store.get(Get(key, consistent=True))
    assert item is not None
    assert item["n"] == 2

"""keygraph serve's HTTP semantics on another spec than this repository's (the social case):
WWW-Authenticate with a 401, Allow with a 405, Cache-Control and Vary on a GET, the media
type and status of a request error as the client's Accept asks, /healthz and /readyz (its
read allowed by the generated policy), the refused operation named in the request log, and
a duplicate Idempotency-Key waiting for the first request's answer."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from keygraph.plan import Delete, Get, Item, Put
from keygraph.serve import create_app, spoken
from keygraph.serve import idempotency as ledger_module
from keygraph.serve.idempotency_key import digest, record_name
from keygraph.serve.package import served
from keygraph.serve.request_log import JsonFormatter
from keygraph.serve.served import Served
from keygraph.stores.view import Forwarding
from keygraph.tokens import issue, verify
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, Compiled
from tests.keygraph.api.policy import allowed, recording, stack_of
from tests.keygraph.api.serving import unreported
from tests.waiting import until

SPEC = CASES / "social" / "spec.toml"
SECRET = "http-semantics-secret-" + "s" * 32
MODERN = "application/graphql-response+json"
CREATE = "mutation M($id: ID!, $h: String!) { createMember(input: "
CREATE += '{memberId: $id, handle: $h, name: "N"}) { member { memberId } } }'
READ = 'query Who { getMember(memberId: "m1") { handle } }'


def auth(subject: str = "m1", **extra: str) -> dict[str, str]:
    token = issue(SECRET, "acme", subject, roles=["member"])
    return {"authorization": f"Bearer {token}", **extra}


@pytest.fixture
async def social(
    compiled: Callable[[Path], Compiled],
    store_factory: StoreFactory,
    kind: str,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[httpx.AsyncClient, Served]]:
    """The social API served on a store of `kind`; every DynamoDB call it makes is checked
    against the generated policy afterwards."""
    package = compiled(SPEC)
    store = await store_factory(kind, package.table)
    app_served = served(package.package.__name__, store, SECRET)
    calls = recording(monkeypatch)
    transport = httpx.ASGITransport(app=create_app(app_served))
    async with httpx.AsyncClient(transport=transport, base_url="http://serve.test") as client:
        yield client, app_served
    assert [call for call in calls if not allowed(stack_of(package), call)] == []


@pytest.mark.parametrize(
    "authorization", [None, "", "Bearer", "Basic dXNlcjpwYXNz", "Bearer not-a-jwt"]
)
async def test_a_401_names_the_bearer_scheme(
    social: tuple[httpx.AsyncClient, Served], authorization: str | None
) -> None:
    client, _ = social
    headers = {} if authorization is None else {"authorization": authorization}
    posted = await client.post("/graphql", json={"query": READ}, headers=headers)
    got = await client.get("/graphql", params={"query": READ}, headers=headers)
    for response in (posted, got):
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert "data" not in response.json()
    assert got.headers["cache-control"] == "no-store"


async def test_a_mutation_over_get_or_head_is_405_allowing_post(
    social: tuple[httpx.AsyncClient, Served],
) -> None:
    client, _ = social
    params = {"query": CREATE, "variables": json.dumps({"id": "m1", "h": "ann"})}
    for method in ("GET", "HEAD"):
        refused = await client.request(method, "/graphql", params=params, headers=auth())
        assert refused.status_code == 405
        assert refused.headers["allow"] == "POST"
    other = await client.request("PUT", "/graphql", json={"query": READ}, headers=auth())
    assert (other.status_code, other.headers["allow"]) == (405, "GET, HEAD, POST")
    read = await client.post("/graphql", json={"query": READ}, headers=auth())
    assert unreported(read.json()) == {"data": {"getMember": None}}  # nothing was written


async def test_a_get_says_how_caches_may_keep_its_answer(
    social: tuple[httpx.AsyncClient, Served],
) -> None:
    client, _ = social
    ok = await client.get("/graphql", params={"query": READ}, headers=auth())
    assert ok.status_code == 200
    assert ok.headers["cache-control"] == "private, max-age=0"
    assert ok.headers["vary"] == "Authorization, Accept"
    head = await client.head("/graphql", params={"query": READ}, headers=auth())
    assert (head.status_code, head.headers["cache-control"]) == (200, "private, max-age=0")
    for params in ({"query": "{ nothing }"}, {"query": '{ getMember(memberId: "") { handle } }'}):
        failed = await client.get("/graphql", params=params, headers=auth(Accept=MODERN))
        assert failed.headers["cache-control"] == "no-store", failed.json()
    posted = await client.post("/graphql", json={"query": READ}, headers=auth())
    assert "cache-control" not in posted.headers


REQUEST_ERRORS = [
    {"query": "{ getMember(memberId: "},  # does not parse
    {"query": "{ nothing }"},  # does not validate
    {"query": "query($id: ID!) { getMember(memberId: $id) { handle } }", "variables": {"id": 1.5}},
    {"query": READ, "operationName": "Other"},  # no such operation
]
MODERN_ACCEPTS: list[str | None] = [None, "*/*", MODERN, f"application/json, {MODERN}"]
LEGACY_ACCEPTS: list[str | None] = [
    "application/json",
    f"application/json, {MODERN};q=0",
    "Application/JSON; charset=utf-8",
]


@pytest.mark.parametrize("body", REQUEST_ERRORS)
@pytest.mark.parametrize("accept", MODERN_ACCEPTS + LEGACY_ACCEPTS)
async def test_a_request_error_is_answered_as_the_accept_header_asks(
    social: tuple[httpx.AsyncClient, Served], body: dict[str, Any], accept: str | None
) -> None:
    client, _ = social
    headers = auth() if accept is None else auth(accept=accept)
    if accept is None:
        client.headers.pop("accept", None)  # httpx sends */* unless told otherwise
    response = await client.post("/graphql", json=body, headers=headers)
    answer = response.json()
    assert answer["errors"]
    if accept in LEGACY_ACCEPTS:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert answer["data"] is None
    else:
        assert response.status_code == 400
        assert response.headers["content-type"] == MODERN
        assert "data" not in answer


@pytest.mark.parametrize("accept", [MODERN, "application/json"])
async def test_what_is_no_graphql_request_is_400_to_every_client(
    social: tuple[httpx.AsyncClient, Served], accept: str
) -> None:
    client, _ = social
    for content in (b"{not json", b"[1, 2]", b'{"query": 5}'):
        refused = await client.post("/graphql", content=content, headers=auth(accept=accept))
        assert refused.status_code == 400
        assert refused.headers["content-type"] == accept
        assert refused.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    field = await client.post(
        "/graphql", json={"query": '{ getMember(memberId: "") { handle } }'}, headers=auth()
    )
    assert field.status_code == 200  # a field's error: the operation ran


async def test_health_and_readiness(social: tuple[httpx.AsyncClient, Served]) -> None:
    client, _ = social
    health = await client.get("/healthz")
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    ready = await client.get("/readyz")
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})


class Stalled(Forwarding):
    """A store whose reads fail with `error`, or never answer when it is None."""

    error: Exception | None = None

    async def get(self, plan: Get) -> Item | None:
        while self.error is None:
            await asyncio.Event().wait()
        raise self.error


@pytest.mark.parametrize("kind", ["embedded"])
async def test_not_ready_while_the_store_fails_or_stalls(
    compiled: Callable[[Path], Compiled],
    store_factory: StoreFactory,
    kind: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from keygraph.errors import StoreUnavailable

    package = compiled(SPEC)
    stalled = Stalled(await store_factory(kind, package.table))
    app = create_app(served(package.package.__name__, stalled, SECRET))
    monkeypatch.setattr(spoken, "READY_TIMEOUT", 0.05)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://serve.test"
    ) as client:
        stalled.error = StoreUnavailable("throttled", applied=False)
        failing = await client.get("/readyz")
        assert (failing.status_code, failing.json()) == (
            503,
            {"status": "unavailable", "reason": "StoreUnavailable"},
        )
        stalled.error = None
        hanging = await client.get("/readyz")
        assert (hanging.status_code, hanging.json()["reason"]) == (503, "TimeoutError")
        assert (await client.get("/healthz")).status_code == 200  # the process answers


async def test_a_refused_operation_is_logged_by_its_name(
    social: tuple[httpx.AsyncClient, Served], caplog: pytest.LogCaptureFixture
) -> None:
    client, _ = social
    two = 'query Broken { nope } query Fine { getMember(memberId: "m1") { handle } }'
    sent = [
        {"query": "query Broken { nope }"},
        {"query": two, "operationName": "Broken"},
        {"query": "query Unparsed { nope"},
    ]
    with caplog.at_level(logging.INFO, logger="keygraph.request"):
        for body in sent:
            await client.post("/graphql", json=body, headers=auth())
        params = {"query": CREATE, "variables": json.dumps({"id": "m1", "h": "ann"})}
        await client.get("/graphql", params=params, headers=auth())
    records = [r for r in caplog.records if r.name == "keygraph.request"]
    lines = [json.loads(JsonFormatter().format(record)) for record in records]
    assert [line.get("operation") for line in lines] == ["Broken", "Broken", None, "M"]
    assert [line["status"] for line in lines] == [400, 400, 400, 405]


async def test_a_duplicate_in_flight_waits_for_the_first(
    social: tuple[httpx.AsyncClient, Served],
) -> None:
    client, _ = social
    body = {"query": CREATE, "variables": {"id": "m7", "h": "kim"}}
    headers = auth(**{"idempotency-key": "k-dup"})
    answers = await asyncio.gather(
        *(client.post("/graphql", json=body, headers=headers) for _ in range(3))
    )
    assert {r.status_code for r in answers} == {200}
    assert len({r.content for r in answers}) == 1
    assert "errors" not in answers[0].json()
    assert sum(r.headers.get("idempotent-replayed") == "true" for r in answers) == 2


async def test_a_waiting_duplicate_runs_once_the_first_gives_its_key_up(
    social: tuple[httpx.AsyncClient, Served], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first request's record stands RUNNING, then goes (it failed having written
    nothing): the duplicate waiting for it claims the key and runs."""
    client, app_served = social
    ledger, store = app_served.ledger, app_served.store
    assert ledger is not None
    headers = auth(**{"idempotency-key": "k-wait"})
    body = {"query": CREATE, "variables": {"id": "m8", "h": "lee"}}
    caller = verify(headers["authorization"].removeprefix("Bearer "), app_served.tokens).caller
    key = ledger.key("acme", record_name("acme", caller, "k-wait"))
    sent = digest(orjson.dumps({**body, "operationName": None}))
    await store.put(Put({**key, "state": "RUNNING", "digest": sent, "at": 10**10, "owner": "x"}))
    looks: list[Put] = []
    put = store.put

    async def counted(plan: Put) -> None:
        if all(plan.item.get(name) == value for name, value in key.items()):
            looks.append(plan)
        await put(plan)

    monkeypatch.setattr(store, "put", counted)
    monkeypatch.setattr(ledger_module, "WAIT_SECONDS", 30.0)
    waiting = asyncio.create_task(client.post("/graphql", json=body, headers=headers))
    await until(lambda: len(looks) >= 2, "the duplicate looking twice at the running key")
    assert not waiting.done()
    await store.delete(Delete(key))
    answer = await waiting
    assert answer.status_code == 200
    assert unreported(answer.json()) == {"data": {"createMember": {"member": {"memberId": "m8"}}}}
    assert "idempotent-replayed" not in answer.headers
    again = await client.post("/graphql", json=body, headers=headers)
    assert (again.content, again.headers["idempotent-replayed"]) == (answer.content, "true")


async def test_a_duplicate_waits_no_longer_than_its_bound(
    social: tuple[httpx.AsyncClient, Served], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record whose request never ends: the duplicate is 409 IN_PROGRESS once it has
    waited WAIT_SECONDS, and wrote nothing."""
    client, app_served = social
    ledger = app_served.ledger
    assert ledger is not None
    headers = auth(**{"idempotency-key": "k-stuck"})
    body = {"query": CREATE, "variables": {"id": "m9", "h": "max"}}
    caller = verify(headers["authorization"].removeprefix("Bearer "), app_served.tokens).caller
    key = ledger.key("acme", record_name("acme", caller, "k-stuck"))
    sent = digest(orjson.dumps({**body, "operationName": None}))
    stuck = {**key, "state": "RUNNING", "digest": sent, "at": 10**10, "owner": "x"}
    await app_served.store.put(Put(stuck))
    monkeypatch.setattr(ledger_module, "WAIT_SECONDS", 0.1)
    busy = await client.post("/graphql", json=body, headers=headers)
    assert (busy.status_code, busy.headers["retry-after"]) == (409, "1")
    assert busy.json()["errors"][0]["extensions"]["code"] == "IN_PROGRESS"
    assert await app_served.store.get(Get(key)) == stuck
    read = await client.post("/graphql", json={"query": READ.replace("m1", "m9")}, headers=auth())
    assert unreported(read.json()) == {"data": {"getMember": None}}

"""Idempotency-Key on `keygraph serve`, on both stores (tests/codegen/cases/social): a
retried mutation gets its first answer and writes nothing again, a refusal included; the
key is its caller's own; another request under it is 422, one still running 409, one whose
process died is taken over after the window; a query ignores the key."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from keygraph.plan import Get, Put
from keygraph.serve import create_app, idempotency
from keygraph.serve.idempotency_key import digest, record_name
from keygraph.serve.package import served
from keygraph.serve.served import Served
from keygraph.store import Store
from keygraph.tokens import issue, verify
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, Compiled
from tests.keygraph.api.policy import allowed, recording, stack_of
from tests.keygraph.api.serving import unreported
from tests.keygraph.api.test_writes import by_type, items

SPEC = CASES / "social" / "spec.toml"
SECRET = "idempotency-secret-" + "s" * 32
CREATE = "mutation($id: ID!, $h: String!) { createMember(input: "
CREATE += '{memberId: $id, handle: $h, name: "N"}) { member { memberId version } } }'


@pytest.fixture
async def app(
    compiled: Callable[[Path], Compiled],
    store_factory: StoreFactory,
    kind: str,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[httpx.AsyncClient, Served]]:
    """The social API served; on DynamoDB, every call it makes, its records' included, is
    checked against the stack's policy afterwards."""
    package = compiled(SPEC)
    store = await store_factory(kind, package.table)
    app_served = served(package.package.__name__, store, SECRET)
    transport = httpx.ASGITransport(app=create_app(app_served))
    calls = recording(monkeypatch)
    async with httpx.AsyncClient(transport=transport, base_url="http://serve.test") as client:
        yield client, app_served
    ledger = [call for call in calls if (call[3] or "").startswith("~KEYGRAPH#")]
    assert ledger or kind == "embedded"
    assert [call for call in calls if not allowed(stack_of(package), call)] == []


def headers(subject: str, key: str | None, role: str = "member") -> dict[str, str]:
    found = {"authorization": f"Bearer {issue(SECRET, 'acme', subject, roles=[role])}"}
    return found | ({"idempotency-key": key} if key is not None else {})


async def send(
    client: httpx.AsyncClient, subject: str, key: str | None, query: str = CREATE, **variables: Any
) -> httpx.Response:
    body = {"query": query, "variables": variables}
    return await client.post("/graphql", json=body, headers=headers(subject, key))


async def members(store: Store) -> int:
    return len(by_type(await items(store), "MEMBER"))


async def test_a_retry_gets_the_first_answer_and_writes_nothing(
    app: tuple[httpx.AsyncClient, Served],
) -> None:
    client, app_served = app
    first = await send(client, "m1", "k-1", id="m1", h="ann")
    assert first.status_code == 200
    assert "errors" not in first.json()
    again = await send(client, "m1", "k-1", id="m1", h="ann")
    assert (again.status_code, again.content) == (200, first.content)
    assert again.headers["idempotent-replayed"] == "true"
    assert await members(app_served.store) == 1
    other = await send(client, "m1", "k-1", id="m1", h="bob")
    assert other.status_code == 422
    assert other.json()["errors"][0]["extensions"]["code"] == "IDEMPOTENCY_KEY_REUSED"
    taken = await send(client, "m2", "k-2", id="m2", h="ann")  # a CONFLICT is kept too
    assert taken.json()["errors"][0]["extensions"]["code"] == "CONFLICT"
    renamed = await send(
        client,
        "m1",
        None,
        'mutation { updateMember(input: {memberId: "m1", expectedVersion: 1, handle: "zed"})'
        " { member { handle } } }",
    )
    assert "errors" not in renamed.json()
    retried = await send(client, "m2", "k-2", id="m2", h="ann")  # free now, but replayed
    assert retried.content == taken.content
    assert await members(app_served.store) == 1
    own = await send(client, "m3", "k-1", id="m3", h="cy")  # another caller's own key
    assert "errors" not in own.json()
    assert "idempotent-replayed" not in own.headers


async def test_running_keys_queries_and_bad_keys(
    app: tuple[httpx.AsyncClient, Served], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, app_served = app
    monkeypatch.setattr(idempotency, "WAIT_SECONDS", 0.2)  # a record whose request never ends
    assert app_served.ledger is not None
    token = headers("m1", None)["authorization"].removeprefix("Bearer ")
    caller = verify(token, app_served.tokens).caller
    name = record_name("acme", caller, "k-run")
    key = app_served.ledger.key("acme", name)
    sent = {"query": CREATE, "variables": {"id": "m1", "h": "ann"}, "operationName": None}
    running = {**key, "state": "RUNNING", "digest": digest(orjson.dumps(sent)), "at": 10**10}
    await app_served.store.put(Put(running))
    busy = await send(client, "m1", "k-run", id="m1", h="ann")
    assert busy.status_code == 409
    assert busy.headers["retry-after"] == "1"
    await app_served.store.put(Put({**running, "at": 1}))  # its process died long ago
    taken = await send(client, "m1", "k-run", id="m1", h="ann")
    assert taken.status_code == 200
    assert "errors" not in taken.json()
    read = await send(client, "m1", "k-read", '{ getMember(memberId: "m1") { handle } }')
    assert unreported(read.json()) == {"data": {"getMember": {"handle": "ann"}}}
    unkept = app_served.ledger.key("acme", record_name("acme", caller, "k-read"))
    assert await app_served.store.get(Get(unkept)) is None  # a query keeps nothing
    bad = await send(client, "m1", "has space", id="m9", h="x9")
    assert bad.status_code == 400

"""What a request loads is freed when the request ends, by reference counting, rather than
left in reference cycles for the garbage collector to find."""

from __future__ import annotations

import gc
import json
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

import httpx
import pytest

from generated.models.user_order import UserOrder
from keygraph.page import Page
from keygraph.serve import app as serve_app
from keygraph.serve.streamed import answer_of
from keygraph.stores.embedded.store import EmbeddedStore
from server.settings import Settings
from tests.server.conftest import Api, app_of
from tests.server.graphql.test_batching import _seed

QUERY = """{ users { edges { node { email
  orders(first: 2) { edges { node { totalCents } } }
  groups { edges { node { name members { edges { node { email } } } } } } } } } }"""


async def _left_in_cycles(request: Callable[[], Awaitable[object]]) -> Counter[str]:
    """The objects, by type name, that the second of two runs of `request` made and left
    for the cycle collector (the first warms caches up; what earlier tests left, released
    meanwhile, is not the request's)."""
    await request()
    gc.collect()
    gc.disable()
    try:
        held = gc.get_objects()  # what exists already stays alive, so it is no garbage here
        await request()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        del held
        return Counter(type(thing).__name__ for thing in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


@pytest.fixture
async def acme(settings: Settings, store: EmbeddedStore, acme_token: str) -> AsyncIterator[Api]:
    """An admin of acme, a client of `keygraph serve`'s app."""
    transport = httpx.ASGITransport(app=app_of(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield Api(client, acme_token)


async def test_loaded_data_is_not_left_in_cycles(acme: Api, store: EmbeddedStore) -> None:
    await _seed(store, users=4, orders_each=2, groups=2)
    left = await _left_in_cycles(lambda: acme.data(QUERY))
    loaded = ("Future", "Page", "User", "UserOrder", "Membership", "Group")
    assert {name: left[name] for name in loaded if left[name]} == {}


async def test_what_a_request_read_is_freed_before_its_response_is_serialized(
    acme: Api, store: EmbeddedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the result is complete, the models and pages behind it are no longer held (by the
    loaders, a page's cursors or the handle that resumed the request): a large response then
    needs memory for itself and its JSON, not also for everything read to build it."""
    await _seed(store, users=4, orders_each=3, groups=2)
    live: list[int] = []

    def counting(*args: Any) -> Any:
        live.append(sum(type(thing) in (UserOrder, Page) for thing in gc.get_objects()))
        return answer_of(*args)

    monkeypatch.setattr(serve_app, "answer_of", counting)
    data = await acme.data(
        "{ users { edges { node { orders(first: 2) { edges { cursor node { id } } } } } } }"
    )
    orders = [edge for user in data["users"]["edges"] for edge in user["node"]["orders"]["edges"]]
    assert len(orders) == 8  # the response holds what was read
    assert live == [0]


async def _post(app: Any, token: str, query: str, variables: dict[str, object] | None) -> int:
    """The request sent to the app itself (no HTTP client, whose own objects are not the
    app's); its status."""
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"authorization", f"Bearer {token}".encode()),
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/graphql",
        "raw_path": b"/graphql",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("test", 80),
    }
    statuses: list[int] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    await app(scope, receive, send)
    return statuses[0]


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        (QUERY, None),
        ("mutation($i: CreateGroupInput!) { createGroup(input: $i) { id } }", {"i": {"name": "G"}}),
        ("{ __schema { queryType { name } } }", None),
    ],
)
async def test_an_answered_request_leaves_no_reference_cycles(
    settings: Settings,
    store: EmbeddedStore,
    acme_token: str,
    query: str,
    variables: dict[str, object] | None,
) -> None:
    """Everything a query, mutation or introspection answered made is freed by reference
    counting when it ends: nothing waits for the cycle collector, so how often it runs does
    not decide how much memory a worker holds (keygraph/serve/gc_tuning.py)."""
    await _seed(store, users=2, orders_each=1, groups=1)
    app = app_of(settings, store)

    async def answered() -> None:
        assert await _post(app, acme_token, query, variables) == 200

    assert sorted((await _left_in_cycles(answered)).items()) == []


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        ("query($id: ID!) { user(id: $id) { id } }", {"id": 5}),  # does not coerce
        ("query($id: ID!) { user(id: $id) { id } }", {"id": "not-an-id"}),  # no such id
    ],
)
async def test_an_error_answer_leaves_no_reference_cycles(
    settings: Settings,
    store: EmbeddedStore,
    acme_token: str,
    query: str,
    variables: dict[str, object] | None,
) -> None:
    """An answer with errors frees what it made too: the exceptions' tracebacks, which hold
    the frames that raised them, go once the answer is made."""
    await _seed(store, users=2, orders_each=1, groups=1)
    app = app_of(settings, store)

    async def answered() -> None:
        await _post(app, acme_token, query, variables)

    assert sorted((await _left_in_cycles(answered)).items()) == []


async def test_an_unexpected_error_leaves_no_reference_cycles(
    settings: Settings,
    store: EmbeddedStore,
    acme_token: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An INTERNAL error's answer frees what it made too: the exception's traceback, which
    holds the frames that raised it, goes once logged (with it)."""
    await _seed(store, users=2, orders_each=1, groups=1)
    app = app_of(settings, store)

    async def failing(self: EmbeddedStore, plan: object) -> object:
        raise RuntimeError("the disk is gone")

    monkeypatch.setattr(EmbeddedStore, "query", failing)

    async def answered() -> None:
        assert await _post(app, acme_token, "{ users { edges { node { email } } } }", None) == 200

    assert sorted((await _left_in_cycles(answered)).items()) == []
    logged = [record for record in caplog.records if record.levelname == "ERROR"]
    assert any("Traceback" in (record.exc_text or "") for record in logged)

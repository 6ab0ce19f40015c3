"""GraphQL over HTTP: GET and POST, media types and statuses, GraphiQL, health endpoints,
masked errors, request ids and the request log."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from generated.table import TABLE
from keygraph.errors import StoreUnavailable
from keygraph.plan import Get, Item, TableDef
from keygraph.serve import create_app
from keygraph.serve.request_log import JsonFormatter
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.compiled import compiled
from server.settings import Settings
from tests.server.conftest import SECRET

MODERN = "application/graphql-response+json"


def _auth(token: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **extra}


async def test_get_runs_queries(client: httpx.AsyncClient, acme_token: str) -> None:
    response = await client.get(
        "/graphql", params={"query": "{ viewer { tenant } }"}, headers=_auth(acme_token)
    )
    assert response.status_code == 200
    assert response.json()["data"] == {"viewer": {"tenant": "acme"}}


async def test_get_refuses_mutations_with_405(client: httpx.AsyncClient, acme_token: str) -> None:
    query = 'mutation { createGroup(input: {name: "x"}) { id } }'
    response = await client.get("/graphql", params={"query": query}, headers=_auth(acme_token))
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    groups = await client.post(
        "/graphql",
        json={"query": "{ users { edges { node { id } } } }"},
        headers=_auth(acme_token),
    )
    assert groups.status_code == 200


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        ("{ users { edges ", None),  # parse error
        ("{ nope }", None),  # validation error
        ("query($f: Int) { users(first: $f) { pageInfo { hasNextPage } } }", {"f": "ten"}),
    ],
)
async def test_request_errors_are_400_for_graphql_response_clients(
    client: httpx.AsyncClient, acme_token: str, query: str, variables: Any
) -> None:
    payload = {"query": query, "variables": variables}
    modern = await client.post("/graphql", json=payload, headers=_auth(acme_token, Accept=MODERN))
    assert modern.status_code == 400
    assert modern.headers["content-type"].startswith(MODERN)
    assert "data" not in modern.json()
    assert modern.json()["errors"]
    legacy = await client.post(
        "/graphql", json=payload, headers=_auth(acme_token, Accept="application/json")
    )
    assert legacy.status_code == 200
    assert legacy.headers["content-type"].startswith("application/json")
    assert legacy.json()["data"] is None


async def test_field_errors_are_200_with_data(client: httpx.AsyncClient, acme_token: str) -> None:
    response = await client.post(
        "/graphql",
        json={"query": '{ viewer { tenant } user(id: "%%%") { id } }'},
        headers=_auth(acme_token, Accept=MODERN),
    )
    assert response.status_code == 200
    body = response.json()
    assert body["data"] == {"viewer": {"tenant": "acme"}, "user": None}
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert body["errors"][0]["path"] == ["user"]


async def test_bad_json_is_400(client: httpx.AsyncClient, acme_token: str) -> None:
    response = await client.post(
        "/graphql",
        content=b"{not json",
        headers=_auth(acme_token, **{"Content-Type": "application/json"}),
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


async def test_request_id_is_echoed_or_made(client: httpx.AsyncClient, acme_token: str) -> None:
    payload = {"query": "{ viewer { tenant } }"}
    given = await client.post(
        "/graphql", json=payload, headers=_auth(acme_token, **{"X-Request-Id": "req-123"})
    )
    assert given.headers["x-request-id"] == "req-123"
    made = await client.post(
        "/graphql", json=payload, headers=_auth(acme_token, **{"X-Request-Id": "bad id\n"})
    )
    assert made.headers["x-request-id"] not in ("", "bad id\n")


async def test_graphiql_in_dev_has_the_token_prefilled(client: httpx.AsyncClient) -> None:
    response = await client.get("/graphql", headers={"Accept": "text/html"})
    assert response.status_code == 200
    assert "graphiql" in response.text.lower()
    assert "https://" not in response.text
    assert "http://" not in response.text
    token = re.search(r"Bearer (ey[\w.-]+)", response.text)
    assert token is not None
    viewer = await client.post(
        "/graphql", json={"query": "{ viewer { tenant } }"}, headers=_auth(token.group(1))
    )
    assert viewer.json()["data"] == {"viewer": {"tenant": "demo"}}


async def test_graphiql_loads_only_its_own_assets_under_a_strict_policy(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/graphql", headers={"Accept": "text/html"})
    policy = page.headers["content-security-policy"]
    for directive in ("script-src 'self'", "style-src 'self'", "connect-src 'self'"):
        assert directive in policy
    assert "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy
    scripts = re.findall(r"<script([^>]*)>", page.text)
    # every script is a file of our own, but the JSON block of settings, which never runs
    assert all("src=" in attributes or "application/json" in attributes for attributes in scripts)
    assets = re.findall(r'(?:src|href)="(graphiql/[^"]+)"', page.text)
    assert len(assets) == 8
    for asset in assets:
        served = await client.get(f"/{asset}")
        assert served.status_code == 200, asset
        assert served.headers["content-type"].split(";")[0] in ("text/javascript", "text/css")


async def _app_client(settings: Settings, store: Any) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(compiled(settings, store)))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield client


@pytest.mark.parametrize(
    "settings",
    [
        Settings(env="production", jwt_secret=SECRET),
        Settings(env="dev", jwt_secret=SECRET, graphiql=False),
    ],
)
async def test_graphiql_is_off_in_production_and_when_disabled(
    settings: Settings, store: EmbeddedStore, tmp_path: Path
) -> None:
    async for client in _app_client(settings.resolved(), store):
        response = await client.get("/graphql", headers={"Accept": "text/html"})
        assert response.status_code == 404


async def test_health_and_readiness(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    assert (await client.get("/readyz")).json() == {"status": "ready"}


class FailingStore(EmbeddedStore):
    """Fails every read, with an unexpected error or an unavailable store."""

    def __init__(self, table: TableDef, *, path: Path) -> None:
        super().__init__(table, path=path)
        self.error: Exception = RuntimeError("secret detail: password=hunter2")

    async def get(self, plan: Get) -> Item | None:
        raise self.error


@pytest.fixture
async def failing_store(tmp_path: Path) -> AsyncIterator[FailingStore]:
    store = FailingStore(TABLE, path=tmp_path / "failing.sqlite3")
    yield store
    await store.close()


@pytest.fixture
async def failing(
    failing_store: FailingStore, settings: Settings
) -> AsyncIterator[httpx.AsyncClient]:
    async for client in _app_client(settings, failing_store):
        yield client


async def test_unexpected_errors_are_masked_and_logged_with_the_request_id(
    failing: httpx.AsyncClient, acme_token: str, caplog: pytest.LogCaptureFixture
) -> None:
    query = '{ viewer { tenant } user(id: "VXNlcjox") { id } }'
    with caplog.at_level(logging.ERROR, logger="keygraph.errors"):
        response = await failing.post(
            "/graphql",
            json={"query": query},
            headers=_auth(acme_token, **{"X-Request-Id": "r-42"}),
        )
    body = response.json()
    assert response.status_code == 200
    assert body["data"] == {"viewer": {"tenant": "acme"}, "user": None}
    assert body["errors"] == [
        {
            "message": "internal error",
            "locations": [{"line": 1, "column": 21}],
            "path": ["user"],
            "extensions": {"code": "INTERNAL", "requestId": "r-42"},
        }
    ]
    assert "hunter2" not in response.text
    assert "Traceback" not in response.text
    records = [r for r in caplog.records if r.name == "keygraph.errors"]
    assert len(records) == 1
    assert getattr(records[0], "request_id", None) == "r-42"
    assert "hunter2" in JsonFormatter().format(records[0])  # the log keeps the detail


async def test_unavailable_store_is_store_unavailable_and_not_ready(
    failing: httpx.AsyncClient,
    failing_store: FailingStore,
    acme_token: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    failing_store.error = StoreUnavailable("throttled")
    with caplog.at_level(logging.INFO, logger="keygraph"):
        body = (
            await failing.post(
                "/graphql",
                json={"query": '{ user(id: "VXNlcjox") { id } }'},
                headers=_auth(acme_token),
            )
        ).json()
    assert body["errors"][0]["extensions"] == {"code": "STORE_UNAVAILABLE"}
    # an expected failure: a warning with its code (the request's line), no traceback,
    # nothing at error level
    warnings = [
        (r.name, getattr(r, "code", None)) for r in caplog.records if r.levelno == logging.WARNING
    ]
    assert warnings == [("keygraph.request", "STORE_UNAVAILABLE")]
    assert not any(r.exc_info for r in caplog.records)
    assert not any(r.levelno >= logging.ERROR for r in caplog.records)
    ready = await failing.get("/readyz")
    assert ready.status_code == 503


async def test_each_request_is_logged_as_json(
    client: httpx.AsyncClient, acme_token: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="keygraph.request"):
        await client.post(
            "/graphql",
            json={"query": "query Who { users { edges { node { id } } } }"},
            headers=_auth(acme_token, **{"X-Request-Id": "log-1"}),
        )
    records = [r for r in caplog.records if r.name == "keygraph.request"]
    assert len(records) == 1
    line = json.loads(JsonFormatter().format(records[0]))
    assert line["request_id"] == "log-1"
    assert line["tenant"] == "acme"
    assert line["operation"] == "Who"
    assert line["status"] == 200
    assert line["store_calls"] == 1
    assert line["store_waves"] == 1
    assert line["duration_ms"] >= 0


async def test_a_request_without_an_id_gets_one_of_its_own(
    client: httpx.AsyncClient, acme_token: str
) -> None:
    ids = []
    for _ in range(3):
        response = await client.post(
            "/graphql", json={"query": "{ viewer { tenant } }"}, headers=_auth(acme_token)
        )
        ids.append(response.headers["X-Request-Id"])
    assert len(set(ids)) == 3
    assert all(re.fullmatch(r"[0-9A-Z]{26}-\d+", found) for found in ids), ids


def test_dev_tokens_carry_tenant_subject_and_expiry(settings: Settings) -> None:
    import jwt

    claims = jwt.decode(issue_token(settings, "t1", "s1", 60), SECRET, algorithms=["HS256"])
    assert (claims["tenant"], claims["sub"]) == ("t1", "s1")
    assert claims["exp"] - claims["iat"] == 60


async def test_a_refused_operation_is_logged_by_name(
    client: httpx.AsyncClient, acme_token: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="keygraph.request"):
        await client.post(
            "/graphql", json={"query": "query Broken { nope }"}, headers=_auth(acme_token)
        )
    records = [r for r in caplog.records if r.name == "keygraph.request"]
    assert [getattr(r, "operation", None) for r in records] == ["Broken"]

"""GraphiQL's Content-Security-Policy lets the page connect to its own origin, over HTTP and
over WebSocket (for subscriptions), and to nothing else; the page comes with an admin token
only in dev mode, never when a secret is configured and dev mode was not asked for."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import jwt
import pytest

from keygraph.serve import create_app, graphiql
from keygraph.store import Store
from server.compiled import compiled
from server.settings import load_settings

HTML = {"Accept": "text/html"}
A_JWT = re.compile(r"ey[\w-]+\.[\w-]+\.[\w-]+")
SECRET = "a-configured-secret-" + "k" * 40


def _connect_src(policy: str) -> list[str]:
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    return directives["connect-src"].split()


async def test_the_page_may_connect_to_its_own_websocket_origin(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/graphql", headers=HTML)
    assert _connect_src(page.headers["content-security-policy"]) == [
        "'self'",
        "ws://keygraph.test",
    ]


async def test_https_gets_wss_and_the_port_is_kept(client: httpx.AsyncClient) -> None:
    page = await client.get("https://keygraph.test:8443/graphql", headers=HTML)
    assert _connect_src(page.headers["content-security-policy"]) == [
        "'self'",
        "wss://keygraph.test:8443",
    ]


@pytest.mark.parametrize(
    "host",
    [
        "evil.test; script-src *",
        "evil.test 'unsafe-inline'",
        "a.test:80:80",
        "user@a.test",
        "",
    ],
)
async def test_a_host_that_is_no_plain_host_adds_nothing(
    client: httpx.AsyncClient, host: str
) -> None:
    page = await client.get("/graphql", headers={**HTML, "Host": host})
    policy = page.headers["content-security-policy"]
    assert _connect_src(policy) == ["'self'"]
    assert policy.count("script-src") == 1


@pytest.mark.parametrize(
    ("scheme", "host", "origin"),
    [
        ("http", "127.0.0.1:8000", "ws://127.0.0.1:8000"),
        ("https", "API.Example.com", "wss://api.example.com"),
        ("http", "[::1]:8000", "ws://[::1]:8000"),
        ("https", "a.test:99999", None),
        ("ftp", "a.test", None),
    ],
)
def test_websocket_origin(scheme: str, host: str, origin: str | None) -> None:
    assert graphiql.websocket_origin(scheme, host) == origin


async def _page(environ: dict[str, str], store: Store) -> httpx.Response:
    """What a browser gets for /graphql from `serve` with these KEYGRAPH_* variables."""
    transport = httpx.ASGITransport(app=create_app(compiled(load_settings(environ), store)))
    async with httpx.AsyncClient(transport=transport, base_url="http://keygraph.test") as c:
        return await c.get("/graphql", headers=HTML)


def _token_in(page: httpx.Response, secret: str) -> dict[str, object]:
    """The claims of the token the page is prefilled with, checked against `secret`."""
    found = re.search(r"Bearer (ey[\w-]+\.[\w-]+\.[\w-]+)", page.text)
    assert found is not None, page.text
    claims: dict[str, object] = jwt.decode(found.group(1), secret, algorithms=["HS256"])
    return claims


async def test_a_configured_secret_hands_out_no_token(tmp_path: Path, store: Store) -> None:
    environ = {"KEYGRAPH_DATA_DIR": str(tmp_path / "data"), "KEYGRAPH_JWT_SECRET": SECRET}
    assert (await _page(environ, store)).status_code == 404
    page = await _page({**environ, "KEYGRAPH_GRAPHIQL": "1"}, store)
    assert page.status_code == 200
    assert "graphiql-config" in page.text
    for text in (page.text, *page.headers.values()):
        assert A_JWT.search(text) is None, text
        assert "Bearer" not in text
    assert not (tmp_path / "data" / "dev-jwt-secret").exists()


async def test_dev_mode_asked_for_prefills_a_token_of_the_secret(
    tmp_path: Path, store: Store
) -> None:
    environ = {"KEYGRAPH_DATA_DIR": str(tmp_path), "KEYGRAPH_JWT_SECRET": SECRET}
    page = await _page({**environ, "KEYGRAPH_ENV": "dev"}, store)
    assert _token_in(page, SECRET)["roles"] == ["admin"]


async def test_with_no_key_configured_the_page_has_a_dev_token(
    tmp_path: Path, store: Store
) -> None:
    page = await _page({"KEYGRAPH_DATA_DIR": str(tmp_path)}, store)
    dev_secret = (tmp_path / "dev-jwt-secret").read_text().strip()
    assert _token_in(page, dev_secret)["tenant"] == "demo"

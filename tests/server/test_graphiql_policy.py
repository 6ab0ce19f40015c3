"""GraphiQL's Content-Security-Policy lets the page connect to its own origin, over HTTP and
over WebSocket (for subscriptions), and to nothing else."""

from __future__ import annotations

import httpx
import pytest

from server.edge import graphiql

HTML = {"Accept": "text/html"}


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

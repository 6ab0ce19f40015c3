"""GraphiQL's vendored assets are exactly the pinned npm files the manifest names, with
their licences, and the page refers to nothing else; `keygraph serve` serves the page and
every asset from its own origin, the page holding a development token only when asked (or
when no secret is configured) and none otherwise."""

from __future__ import annotations

import hashlib
import re
import urllib.request
from pathlib import Path
from typing import Any

import jwt
import pytest

from keygraph.serve import Served, graphiql
from keygraph.store import Store
from keygraph.tokens import DEV_TENANT, TokenKey, issue
from tests.keygraph.api.conftest import CASES, CODEC, SECRET, Compiled, post, served_client
from tests.keygraph.api.serving import keygraph_serve, unreported

MANIFEST = Path(graphiql.__file__).with_name("ASSETS")
OWN = {"keygraph-graphiql.js", "keygraph-graphiql.css"}
HTML = {"Accept": "text/html"}
A_JWT = re.compile(r"ey[\w-]+\.[\w-]+\.[\w-]+")


def _rows() -> list[list[str]]:
    lines = MANIFEST.read_text().splitlines()
    return [line.split() for line in lines if line and not line.startswith("#")]


def test_every_vendored_file_is_pinned_and_unchanged() -> None:
    rows = _rows()
    for file, package, _path, sha in rows:
        assert "@" in package.lstrip("@"), f"{package} has no pinned version"
        digest = hashlib.sha256((graphiql.STATIC_DIR / file).read_bytes()).hexdigest()
        assert digest == sha, f"{file} differs from {package}"
    listed = {row[0] for row in rows}
    present = {p.name for p in graphiql.STATIC_DIR.iterdir() if p.is_file()}
    assert present == listed | OWN


def test_the_licences_are_kept() -> None:
    licences = {p.name for p in (graphiql.STATIC_DIR / "licenses").iterdir()}
    assert licences == {"react.LICENSE", "react-dom.LICENSE", "graphiql.LICENSE"}
    for name in licences:
        assert "MIT License" in (graphiql.STATIC_DIR / "licenses" / name).read_text()


def test_the_page_loads_every_asset_and_nothing_else() -> None:
    html = bytes(graphiql.page("/graphql", "Bearer t", "ws://a.test").body).decode()
    assets = {row[0] for row in _rows()} | OWN
    assert {name for name in assets if f"graphiql/{name}" in html} == assets
    assert html.count('src="') + html.count('href="graphiql/') == len(assets)


def _token_in(html: str, secret: str) -> dict[str, Any]:
    """The claims of the token the page is prefilled with, checked against `secret`."""
    found = re.search(r"Bearer (ey[\w-]+\.[\w-]+\.[\w-]+)", html)
    assert found is not None, html
    claims: dict[str, Any] = jwt.decode(found.group(1), secret, algorithms=["HS256"])
    return claims


@pytest.mark.parametrize("kind", ["embedded"])
async def test_the_served_page_and_every_asset_come_from_its_own_origin(
    shop: tuple[Compiled, Store],
) -> None:
    package, store = shop
    async with served_client(Served(package.schema, store, TokenKey(SECRET), CODEC)) as client:
        page = await client.get("/graphql", headers=HTML)
        assert page.status_code == 200
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy
        assert "script-src 'self'" in policy
        assert "//" not in page.text  # no URL of another origin, nor of this one's host
        linked = set(re.findall(r'(?:src|href)="([^"]+)"', page.text)) - {"data:,"}
        assert linked == {f"graphiql/{name}" for name in {row[0] for row in _rows()} | OWN}
        for path in linked:
            asset = await client.get(f"/{path}")
            assert asset.status_code == 200, path
            assert asset.content == (graphiql.STATIC_DIR / path.split("/")[1]).read_bytes()
        assert A_JWT.search(page.text) is None  # no token unless development asks for one
        assert (await client.get("/graphql")).status_code == 401  # not a browser: the API


@pytest.mark.parametrize("kind", ["embedded"])
async def test_a_development_page_holds_a_token_that_answers(
    shop: tuple[Compiled, Store],
) -> None:
    package, store = shop

    def authorization() -> str:
        return f"Bearer {issue(SECRET, DEV_TENANT, 'graphiql')}"

    served = Served(package.schema, store, TokenKey(SECRET), CODEC, dev_authorization=authorization)
    async with served_client(served) as client:
        page = await client.get("/graphql", headers=HTML)
        claims = _token_in(page.text, SECRET)
        assert (claims["tenant"], claims["sub"]) == (DEV_TENANT, "graphiql")
        header = re.search(r"Bearer ey[\w.-]+", page.text)
        assert header is not None
        answer = await post(client, {"query": "{ __typename }"}, authorization=header.group(0))
        assert unreported(answer.json()) == {"data": {"__typename": "Query"}}
    closed = Served(package.schema, store, TokenKey(SECRET), CODEC, graphiql=False)
    async with served_client(closed) as client:
        assert (await client.get("/graphql", headers=HTML)).status_code == 404
        assert (await client.get("/graphiql/graphiql.min.js")).status_code == 404


def _get(url: str, **headers: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read()


def test_keygraph_serve_without_a_secret_hands_its_page_a_dev_token(tmp_path: Path) -> None:
    spec = CASES / "webshop" / "spec.toml"
    db = tmp_path / "data" / "shop.sqlite3"
    with keygraph_serve("--spec", spec, "--db", db, cwd=tmp_path) as url:
        status, html = _get(f"{url}/graphql", Accept="text/html")
        assert status == 200
        secret = (db.parent / "dev-jwt-secret").read_text().strip()
        assert _token_in(html.decode(), secret)["tenant"] == DEV_TENANT
        assert (
            _get(f"{url}/graphiql/keygraph-graphiql.js")[1]
            == (graphiql.STATIC_DIR / "keygraph-graphiql.js").read_bytes()
        )
    configured = {"KEYGRAPH_JWT_SECRET": SECRET}
    with keygraph_serve("--spec", spec, "--db", db, cwd=tmp_path, env=configured) as url:
        assert A_JWT.search(_get(f"{url}/graphql", Accept="text/html")[1].decode()) is None
    with keygraph_serve("--spec", spec, "--db", db, "--dev", cwd=tmp_path, env=configured) as url:
        assert _token_in(_get(f"{url}/graphql", Accept="text/html")[1].decode(), SECRET)

"""GraphiQL's vendored assets are exactly the pinned npm files the manifest names, with
their licences, and the page refers to nothing else."""

from __future__ import annotations

import hashlib
from pathlib import Path

from server.edge import graphiql

MANIFEST = Path(graphiql.__file__).with_name("ASSETS")
OWN = {"keygraph-graphiql.js", "keygraph-graphiql.css"}


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

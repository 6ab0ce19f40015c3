"""Trusted documents through the app `serve` runs (server/compiled.py): only a manifest's
operations run; a manifest that cannot be used stops the server at start, and the documents
command checks and makes manifests against the schema it serves."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from keygraph.serve import create_app
from keygraph.serve.manifest import apollo_manifest, sha256
from keygraph.stores.embedded.store import EmbeddedStore
from server.cli import main
from server.compiled import compiled
from server.settings import Settings, SettingsError
from tests.server.persisted.conftest import USERS, codes, get, persisted, post

VIEWER = "{ viewer { tenant } }"


@pytest.fixture
def manifest_path(tmp_path: Path) -> Path:
    path = tmp_path / "manifest.json"
    path.write_bytes(orjson.dumps(apollo_manifest([("Users", "query", USERS)])))
    return path


@pytest.fixture
async def trusted(
    settings: Settings, store: EmbeddedStore, manifest_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(compiled(replace(settings, trusted_documents=manifest_path), store))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        yield client


async def test_manifest_operations_run_by_hash_and_by_text(
    trusted: httpx.AsyncClient, acme_token: str
) -> None:
    expected: dict[str, Any] = {"users": {"edges": []}}
    by_hash = await post(trusted, acme_token, {"extensions": persisted(USERS)})
    assert by_hash.json()["data"] == expected
    by_get = await get(trusted, acme_token, {"extensions": persisted(USERS)})
    assert by_get.json()["data"] == expected
    by_text = await post(trusted, acme_token, {"query": USERS})
    assert by_text.json()["data"] == expected


async def test_free_text_is_refused(trusted: httpx.AsyncClient, acme_token: str) -> None:
    for response in (
        await post(trusted, acme_token, {"query": VIEWER}),
        await get(trusted, acme_token, {"query": VIEWER}),
        await post(trusted, acme_token, {"query": "{ __schema { types { name } } }"}),
        await post(trusted, acme_token, {"variables": {}}),
    ):
        assert response.status_code == 403
        assert codes(response) == ["PERSISTED_QUERY_REQUIRED"]


async def test_nothing_registers(trusted: httpx.AsyncClient, acme_token: str) -> None:
    register = {"query": VIEWER, "extensions": persisted(VIEWER)}
    assert codes(await post(trusted, acme_token, register)) == ["PERSISTED_QUERY_NOT_FOUND"]
    later = await post(trusted, acme_token, {"extensions": persisted(VIEWER)})
    assert codes(later) == ["PERSISTED_QUERY_NOT_FOUND"]


def _write(path: Path, data: Any) -> Path:
    path.write_bytes(data if isinstance(data, bytes) else orjson.dumps(data))
    return path


BAD_MANIFESTS: list[tuple[Any, str]] = [
    (b"{nope", "not JSON"),
    ([], "must be a JSON object"),
    ({"abc": VIEWER}, "no sha256 hash"),
    ({"0" * 64: VIEWER}, "not the sha256 of its document"),
    ({sha256(VIEWER): 5}, "non-empty string"),
    ({"format": "apollo-persisted-query-manifest", "version": 2}, "unknown manifest format"),
    ({"format": "apollo-persisted-query-manifest", "version": 1}, "`operations` must be"),
    (
        {"format": "apollo-persisted-query-manifest", "version": 1, "operations": [5]},
        "operations[0] must be an object",
    ),
    (
        {
            "format": "apollo-persisted-query-manifest",
            "version": 1,
            "operations": [{"id": "0" * 64, "body": VIEWER}],
        },
        "operations[0]: " + "0" * 64 + " is not the sha256",
    ),
]


@pytest.mark.parametrize(("data", "reason"), BAD_MANIFESTS)
def test_a_bad_manifest_stops_the_server_at_start(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    data: Any,
    reason: str,
) -> None:
    path = _write(tmp_path / "bad.json", data)
    with pytest.raises(SettingsError, match="trusted documents") as raised:
        Settings(data_dir=tmp_path, trusted_documents=path).resolved()
    assert reason in str(raised.value)
    monkeypatch.setenv("KEYGRAPH_TRUSTED_DOCUMENTS", str(path))
    monkeypatch.setenv("KEYGRAPH_DATA_DIR", str(tmp_path))
    assert main(["serve"]) == 2
    assert reason in capsys.readouterr().err
    assert main(["documents", "check", str(path)]) == 2


def test_a_missing_manifest_stops_the_server(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="No such file"):
        Settings(data_dir=tmp_path, trusted_documents=tmp_path / "none.json").resolved()


def test_documents_make_then_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "users.graphql").write_text(USERS)
    output = tmp_path / "manifest.json"
    made_with = ["documents", "make", str(tmp_path / "users.graphql"), "--output", str(output)]
    assert main(made_with) == 0
    made = orjson.loads(output.read_bytes())
    assert made["operations"] == [
        {"id": sha256(USERS), "name": "Users", "type": "query", "body": USERS}
    ]
    assert main(["documents", "check", str(output)]) == 0
    assert "1 documents, all valid" in capsys.readouterr().out


def test_documents_refuse_what_does_not_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = _write(tmp_path / "stale.json", {sha256("{ nope }"): "{ nope }"})
    assert main(["documents", "check", str(stale)]) == 1
    assert "Cannot query field 'nope'" in capsys.readouterr().err
    two = tmp_path / "two.graphql"
    two.write_text("query A { viewer { tenant } } query B { viewer { tenant } }")
    assert main(["documents", "make", str(two)]) == 2
    assert "one operation, not 2" in capsys.readouterr().err

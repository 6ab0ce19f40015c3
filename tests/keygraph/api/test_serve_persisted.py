"""Persisted documents in `keygraph serve`'s app, in process: a document sent by its sha256
alone once registered (over POST and GET), an unknown hash answered so clients send the
text, a text that is not its hash's or does not validate never registered, a malformed or
huge `persistedQuery` refused, and a trusted-documents app running only its manifest's."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from keygraph.serve import Served
from keygraph.serve import cli as serve_cli
from keygraph.serve.manifest import apollo_manifest, load, sha256
from keygraph.serve.persisted import Documents
from keygraph.store import Store
from keygraph.tokens import TokenKey
from tests.keygraph.api.conftest import CODEC, SECRET, Compiled, bearer, post, served_client
from tests.keygraph.api.serving import unreported

TEA = '{ product(sku: "TEA") { title } }'

pytestmark = pytest.mark.parametrize("kind", ["embedded"])


def hashed(query: str, **persisted: Any) -> dict[str, Any]:
    """A request's `extensions` naming `query` by its sha256."""
    return {"persistedQuery": {"version": 1, "sha256Hash": sha256(query), **persisted}}


def code(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["errors"][0]["extensions"]["code"]


@pytest.fixture
async def client(shop: tuple[Compiled, Store]) -> AsyncIterator[httpx.AsyncClient]:
    package, store = shop
    served = Served(package.schema, store, TokenKey(SECRET), CODEC, max_body_bytes=64 * 1024)
    async with served_client(served) as c:
        yield c


async def test_a_hash_runs_its_document_once_registered(client: httpx.AsyncClient) -> None:
    unknown = await post(client, {"extensions": hashed(TEA)}, **bearer())
    assert code(unknown) == (200, "PERSISTED_QUERY_NOT_FOUND")
    assert unknown.json()["errors"][0]["message"] == "PersistedQueryNotFound"
    sent = await post(client, {"query": TEA, "extensions": hashed(TEA)}, **bearer())
    assert unreported(sent.json()) == {"data": {"product": {"title": "Tea"}}}
    again = await post(client, {"extensions": hashed(TEA)}, **bearer(tenant="globex"))
    assert again.json() == sent.json()  # a document is no tenant's: any tenant runs it
    params = {"extensions": orjson.dumps(hashed(TEA)).decode()}
    got = await client.get("/graphql", params=params, headers=bearer())
    assert unreported(got.json()) == {"data": {"product": {"title": "Tea"}}}
    mate = '{ product(sku: "MATE") { title } }'
    params = {"query": mate, "extensions": orjson.dumps(hashed(mate)).decode()}
    registered = await client.get("/graphql", params=params, headers=bearer())
    assert unreported(registered.json()) == {"data": {"product": {"title": "Mate"}}}
    by_hash = await post(client, {"extensions": hashed(mate)}, **bearer())
    assert by_hash.json() == registered.json()


async def test_a_text_is_registered_only_under_its_own_valid_hash(
    client: httpx.AsyncClient,
) -> None:
    other = '{ product(sku: "MATE") { title } }'
    lying = await post(client, {"query": other, "extensions": hashed(TEA)}, **bearer())
    assert code(lying) == (400, "PERSISTED_QUERY_HASH_MISMATCH")
    assert code(await post(client, {"extensions": hashed(TEA)}, **bearer()))[1] == (
        "PERSISTED_QUERY_NOT_FOUND"
    )
    invalid = "{ nothing }"
    answered = await post(client, {"query": invalid, "extensions": hashed(invalid)}, **bearer())
    assert answered.status_code == 400
    assert code(await post(client, {"extensions": hashed(invalid)}, **bearer()))[1] == (
        "PERSISTED_QUERY_NOT_FOUND"
    )
    anonymous = await post(client, {"extensions": hashed(TEA)})
    assert anonymous.status_code == 401  # the token comes first, a hash or not


@pytest.mark.parametrize(
    "extensions",
    [
        {"persistedQuery": "yes"},
        {"persistedQuery": []},
        {"persistedQuery": {"version": 2, "sha256Hash": sha256(TEA)}},
        {"persistedQuery": {"version": True, "sha256Hash": sha256(TEA)}},
        {"persistedQuery": {"version": 1}},
        {"persistedQuery": {"version": 1, "sha256Hash": sha256(TEA).upper()}},
        {"persistedQuery": {"version": 1, "sha256Hash": sha256(TEA) + "0"}},
        {"persistedQuery": {"version": 1, "sha256Hash": "a" * 50_000}},
        {"persistedQuery": {"version": 1, "sha256Hash": {"$gt": ""}}},
    ],
)
async def test_a_malformed_persisted_query_is_refused(
    client: httpx.AsyncClient, extensions: dict[str, Any]
) -> None:
    assert code(await post(client, {"extensions": extensions}, **bearer())) == (
        400,
        "BAD_REQUEST",
    )
    params = {"extensions": orjson.dumps(extensions).decode()[:4000]}
    got = await client.get("/graphql", params=params, headers=bearer())
    assert code(got) == (400, "BAD_REQUEST")


async def test_hostile_bodies_are_refused_before_a_hash_is_looked_at(
    client: httpx.AsyncClient,
) -> None:
    huge = {"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "a" * 70_000}}}
    assert code(await post(client, huge, **bearer())) == (413, "REQUEST_TOO_LARGE")
    deep = b'{"extensions": {"persistedQuery": ' + b"[" * 2000 + b"]" * 2000 + b"}}"
    nested = await client.post("/graphql", content=deep, headers=bearer())
    assert code(nested) == (400, "BAD_REQUEST")
    got = await client.get("/graphql", params={"extensions": "{not json"}, headers=bearer())
    assert code(got) == (400, "BAD_REQUEST")
    neither = await post(client, {"extensions": {"other": 1}}, **bearer())
    assert code(neither) == (400, "BAD_REQUEST")


def _manifest(tmp_path: Path) -> Path:
    path = tmp_path / "manifest.json"
    path.write_bytes(orjson.dumps(apollo_manifest([("Tea", "query", TEA)])))
    return path


async def test_trusted_documents_alone_run(shop: tuple[Compiled, Store], tmp_path: Path) -> None:
    package, store = shop
    documents = Documents(load(_manifest(tmp_path)))
    served = Served(package.schema, store, TokenKey(SECRET), CODEC, persisted=documents)
    async with served_client(served) as client:
        by_hash = await post(client, {"extensions": hashed(TEA)}, **bearer())
        assert unreported(by_hash.json()) == {"data": {"product": {"title": "Tea"}}}
        by_text = await post(client, {"query": TEA}, **bearer())
        assert by_text.json() == by_hash.json()
        other = '{ product(sku: "MATE") { title } }'
        text = await post(client, {"query": other}, **bearer())
        assert code(text) == (403, "PERSISTED_QUERY_REQUIRED")
        got = await client.get("/graphql", params={"query": other}, headers=bearer())
        assert code(got) == (403, "PERSISTED_QUERY_REQUIRED")
        introspection = await post(client, {"query": "{ __typename }"}, **bearer())
        assert code(introspection) == (403, "PERSISTED_QUERY_REQUIRED")
        registering = await post(client, {"query": other, "extensions": hashed(other)}, **bearer())
        assert code(registering) == (200, "PERSISTED_QUERY_NOT_FOUND")
        again = await post(client, {"extensions": hashed(other)}, **bearer())
        assert code(again) == (200, "PERSISTED_QUERY_NOT_FOUND")  # nothing registers
        no_query = await post(client, {"variables": {}}, **bearer())
        assert code(no_query) == (403, "PERSISTED_QUERY_REQUIRED")


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"[]",
        orjson.dumps({"0" * 64: TEA}),
        orjson.dumps({sha256(TEA): ""}),
        orjson.dumps({"format": "apollo-persisted-query-manifest", "version": 2}),
    ],
)
def test_serve_refuses_a_manifest_it_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, kind: str
) -> None:
    path = tmp_path / "manifest.json"
    path.write_bytes(content)
    commands = argparse.ArgumentParser().add_subparsers(dest="command")
    serve_cli.add_parsers(commands)
    parser = commands.choices["serve"]
    args = parser.parse_args(["--package", "nothing", "--trusted-documents", str(path)])
    args.db = tmp_path / "keygraph.sqlite3"
    assert serve_cli.serve(args, "nothing") == serve_cli.EXIT_BAD_INPUT
    assert "trusted documents" in capsys.readouterr().err

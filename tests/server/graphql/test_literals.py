"""Documents that differ only in their literals share one preparation
(keygraph/serve/literals.py), on both executors: each request still sees its own values
(cost, `first`, authorization, tenant), invalid literals get the errors of the text as
written, and the cache stays within its bounds."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from keygraph.serve.document_cache import DocumentCache
from keygraph.serve.literals import split
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.edge.app import create_app
from server.graphql.ids import from_global_id
from server.settings import ExecutorKind, Limits, Settings, load_settings
from tests.server.conftest import Api

USER = '{ user(id: "%s") { id email name } }'


@pytest.fixture(params=["compiled", "strawberry"])
def executor(request: pytest.FixtureRequest) -> ExecutorKind:
    name: ExecutorKind = request.param
    return name


async def _client(settings: Settings, store: EmbeddedStore) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=create_app(settings, store))
    return httpx.AsyncClient(transport=transport, base_url="http://t")


@pytest.fixture
async def apps(
    settings: Settings, store: EmbeddedStore, executor: ExecutorKind
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """The app with literals normalised, and one preparing every text as written."""
    normalised = await _client(replace(settings, executor=executor), store)
    written_app = create_app(replace(settings, executor=executor), store)
    written_app.graphql.schema.preparation.normalise = False  # type: ignore[attr-defined]
    written = httpx.AsyncClient(transport=httpx.ASGITransport(app=written_app), base_url="http://t")
    yield normalised, written
    await normalised.aclose()
    await written.aclose()


async def _post(client: httpx.AsyncClient, token: str, query: str) -> tuple[int, dict[str, Any]]:
    response = await client.post(
        "/graphql",
        json={"query": query},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/graphql-response+json"},
    )
    body: dict[str, Any] = response.json()
    return response.status_code, body


def _found(body: dict[str, Any]) -> str:
    found: str = body["extensions"].pop("documentCache")["request"]
    body["extensions"]["cost"].pop("budget")  # the two apps share the tenants' budget
    return found


async def test_distinct_ids_share_one_preparation(
    apps: tuple[httpx.AsyncClient, httpx.AsyncClient], acme_token: str
) -> None:
    normalised, _ = apps
    api = Api(normalised, acme_token)
    ids = [(await api.create_user(f"u{n}@acme.test"))["id"] for n in range(3)]
    found = []
    for user_id in ids * 2:
        status, body = await _post(normalised, acme_token, USER % user_id)
        assert status == 200
        assert body["data"]["user"]["id"] == user_id
        found.append(body["extensions"]["documentCache"]["request"])
        entries = body["extensions"]["documentCache"]["entries"]
    assert found == ["prepared"] + ["shape"] * 5
    assert entries <= 2  # the create mutation's text and the user query's shape


INVALID = [
    "{ users(first: 2147483648) { edges { node { id } } } }",
    '{ users(first: "3") { edges { node { id } } } }',
    "{ users(first: 3.5) { edges { node { id } } } }",
    "{ user(id: 1.5) { id } }",
    '{ user(id: "") { id } }',
    '{ user(id: "x") { id } }',
    '{ user(id: "x\\u0000y") { id } }',
    '{ ordersByStatus(status: "PAID") { edges { node { id } } } }',
    "{ ordersByStatus(status: NOPE) { edges { node { id } } } }",
    "{ users(first: 101) { edges { node { id } } } }",
    "{ shopsNear(lat: 1e400, lng: 0, radiusKm: 1) { distanceKm } }",
    "{ shopsNear(lat: 91, lng: 0, radiusKm: 1) { distanceKm } }",
    '{ a: user(id: "x") { id } a: user(id: "y") { id } }',
    '{ user(id: "x") { orders(from: "yesterday") { edges { node { id } } } } }',
]


@pytest.mark.parametrize("query", INVALID)
async def test_invalid_literals_answer_as_written(
    apps: tuple[httpx.AsyncClient, httpx.AsyncClient], acme_token: str, query: str
) -> None:
    """Each is sent after a valid document of its shape: the values are checked against
    it, and the errors are those of the text as written, naming the literal as written."""
    normalised, _ = apps
    valid = "{ users(first: 3) { edges { node { id } } } }"
    await _post(normalised, acme_token, valid)
    for primer in (
        '{ user(id: "a") { id } }',
        "{ shopsNear(lat: 1, lng: 0, radiusKm: 1) { distanceKm } }",
    ):
        await _post(normalised, acme_token, primer)
    answers = [await _post(client, acme_token, query) for client in apps]
    for _, body in answers:
        _found(body)
    assert answers[0] == answers[1]
    assert "errors" in answers[0][1]
    assert "_l" not in str(answers[0][1]["errors"])


async def test_each_first_is_charged_its_own_cost(
    apps: tuple[httpx.AsyncClient, httpx.AsyncClient], acme_token: str
) -> None:
    query = (
        "{ users(first: %d) { edges { node { id orders(first: %d) { edges { node { id } } } } } } }"
    )
    costs = []
    for sizes in ((2, 3), (5, 7), (2, 3)):
        answers = [await _post(client, acme_token, query % sizes) for client in apps]
        found = [_found(body) for _, body in answers]
        assert answers[0] == answers[1]
        costs.append((found[0], answers[0][1]["extensions"]["cost"]["requested"]))
    assert costs == [("prepared", 2 + 2 * 3), ("shape", 5 + 5 * 7), ("shape", 2 + 2 * 3)]


async def test_include_literals_are_honoured(
    apps: tuple[httpx.AsyncClient, httpx.AsyncClient], acme_token: str
) -> None:
    normalised, _ = apps
    await Api(normalised, acme_token).create_user("a@acme.test")
    query = "{ viewer { tenant } users(first: 1) @include(if: %s) { edges { node { id } } } }"
    for flag in ("true", "false", "true"):
        answers = [await _post(client, acme_token, query % flag) for client in apps]
        for _, body in answers:
            _found(body)
        assert answers[0] == answers[1]
        assert ("users" in answers[0][1]["data"]) == (flag == "true")


async def test_rules_and_tenants_see_each_requests_values(
    apps: tuple[httpx.AsyncClient, httpx.AsyncClient],
    acme_token: str,
    globex_token: str,
    settings: Settings,
) -> None:
    normalised, _ = apps
    acme = Api(normalised, acme_token)
    own, other = [(await acme.create_user(f"{n}@acme.test"))["id"] for n in ("own", "other")]
    theirs = (await Api(normalised, globex_token).create_user("g@globex.test"))["id"]
    member = issue_token(settings, "acme", from_global_id(own)[1], roles=["member"])
    seen = []
    for token, user_id in (
        (member, own),
        (member, other),
        (globex_token, own),
        (acme_token, theirs),
        (globex_token, theirs),
    ):
        answers = [await _post(client, token, USER % user_id) for client in apps]
        for _, body in answers:
            _found(body)
        assert answers[0] == answers[1]
        body = answers[0][1]
        user = body["data"]["user"]
        seen.append(
            (user and user["email"], [e["extensions"]["code"] for e in body.get("errors", [])])
        )
    assert seen == [
        ("own@acme.test", []),
        (None, ["FORBIDDEN"]),
        (None, []),
        (None, []),
        ("g@globex.test", []),
    ]


async def test_errors_are_located_in_the_texts_own_literals(
    apps: tuple[httpx.AsyncClient, httpx.AsyncClient], acme_token: str
) -> None:
    query = '{ a: user(id: "%s") { id }\n  b: user(id: "%s") { id } }'
    for values in (("x", "y"), ("a-much-longer-literal", "z"), ("", "y" * 40)):
        answers = [await _post(client, acme_token, query % values) for client in apps]
        for _, body in answers:
            _found(body)
        assert answers[0] == answers[1]
        locations = [e["locations"] for e in answers[0][1]["errors"]]
        assert locations == [[{"line": 1, "column": 3}], [{"line": 2, "column": 3}]]


async def test_mutation_literals_answer_as_written(
    apps: tuple[httpx.AsyncClient, httpx.AsyncClient], acme_token: str
) -> None:
    create = 'mutation { createShop(input: {name: "%s", lat: %s, lng: 13.4}) { name lat lng } }'
    for name, lat in (("One", "52.5"), ("Two", "-1"), ("Bad", "91"), ("Big", "1e400")):
        answers = [await _post(client, acme_token, create % (name, lat)) for client in apps]
        for _, body in answers:
            _found(body)
        assert answers[0][0] == answers[1][0]
        assert answers[0][1].get("errors") == answers[1][1].get("errors")
        data = answers[0][1].get("data")
        if data and data["createShop"]:
            assert data == answers[1][1]["data"]
            assert data["createShop"]["name"] == name


async def test_dev_mode_reports_the_cache_and_production_does_not(
    tmp_path: Path, store: EmbeddedStore
) -> None:
    secret = "s" * 40
    for env in ("dev", "production"):
        settings = Settings(data_dir=tmp_path, jwt_secret=secret, env=env).resolved()
        async with await _client(settings, store) as client:
            token = issue_token(settings, "acme", roles=["admin"])
            _, body = await _post(client, token, "{ viewer { tenant } }")
            _, body = await _post(client, token, "{ viewer { tenant } }")
            report = body["extensions"].get("documentCache")
            if env == "production":
                assert report is None
            else:
                assert report == {
                    "request": "text",
                    "hits": 1,
                    "misses": 1,
                    "hitRate": 0.5,
                    "entries": 1,
                    "chars": len("{ viewer { tenant } }"),
                }


def test_the_cache_is_bounded_by_entries_and_characters() -> None:
    cache = DocumentCache(max_entries=3, max_chars=10)
    for key in "abcd":
        cache.put(key, key.upper(), 1)
    assert [cache.get(key) for key in "abcd"] == [None, "B", "C", "D"]
    cache.get("b")
    cache.put("e", "E", 8)  # 11 characters: the least recently used goes (c)
    assert [cache.get(key) for key in "bcde"] == ["B", None, "D", "E"]
    assert (len(cache), cache.chars) == (3, 10)
    cache.put("huge", "H", 11)
    assert cache.get("huge") is None
    assert cache.chars == 10


def test_the_cache_bounds_are_settings() -> None:
    loaded = load_settings(
        {"KEYGRAPH_DOCUMENT_CACHE_ENTRIES": "7", "KEYGRAPH_DOCUMENT_CACHE_CHARS": "900"},
        jwt_secret="s" * 40,
    )
    assert (loaded.limits.document_cache_entries, loaded.limits.document_cache_chars) == (7, 900)
    assert Limits().document_cache_chars > 0


@pytest.mark.parametrize(
    ("text", "literals"),
    [
        ('{ a(x: "1", y: 2) }', ['"1"', "2"]),
        ("{ user2(id: -3.5e2) }", ["-3.5e2"]),
        ('# "not" 1\n{ a(x: """b"c""") }', ['"""b"c"""']),
        ('{ a(x: "q\\"uote") }', ['"q\\"uote"']),
        ("{ a { b } }", []),
    ],
)
def test_literals_are_split_out_of_the_text(text: str, literals: list[str]) -> None:
    found = split(text)
    assert ([text[start:end] for start, end in found.spans] if found else []) == literals


async def test_literals_outside_arguments_stay_as_written(
    apps: tuple[httpx.AsyncClient, httpx.AsyncClient], acme_token: str
) -> None:
    """A variable's default is kept as written: documents that differ in it are prepared
    each as written, and each is charged by its own default. So is a document of several
    operations."""
    query = "query($n: Int = %d) { user(id: %s) { id } users(first: $n) { edges { node { id } } } }"
    found = []
    for default, user_id in ((2, '"a"'), (2, '"b"'), (5, '"c"')):
        answers = [await _post(client, acme_token, query % (default, user_id)) for client in apps]
        found.append(_found(answers[0][1]))
        _found(answers[1][1])
        assert answers[0] == answers[1]
        assert answers[0][1]["extensions"]["cost"]["requested"] == 1 + default
    several = '{ viewer { tenant } } query Other { user(id: "x") { id } }'
    answers = [await _post(client, acme_token, several) for client in apps]
    found.append(_found(answers[0][1]))
    _found(answers[1][1])
    assert answers[0] == answers[1]
    assert found == ["prepared", "shape", "prepared", "prepared"]

"""Automatic persisted queries through the app: a hash alone, then the hash with its text,
over POST and GET; every malformed `persistedQuery` is a clear 400."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import validate

from keygraph.serve import admission
from keygraph.serve.limits import parse_limited
from tests.server.conftest import Api
from tests.server.persisted.conftest import CREATE, USERS, codes, get, persisted, post


async def test_post_round_trip(acme: Api) -> None:
    await acme.create_user("a@acme.test")
    by_hash = {"extensions": persisted(USERS), "variables": {"n": 5}}
    missing = await post(acme.client, acme.token, by_hash)
    assert missing.status_code == 200  # Apollo Client retries with the text on 200, not 400
    assert missing.json()["errors"][0]["message"] == "PersistedQueryNotFound"
    assert codes(missing) == ["PERSISTED_QUERY_NOT_FOUND"]
    registered = await post(acme.client, acme.token, {**by_hash, "query": USERS})
    expected = {"users": {"edges": [{"node": {"email": "a@acme.test"}}]}}
    assert registered.json()["data"] == expected
    hit = await post(acme.client, acme.token, by_hash)
    assert hit.status_code == 200
    assert hit.json()["data"] == expected


async def test_get_round_trip_with_cache_headers(acme: Api) -> None:
    await acme.create_user("a@acme.test")
    by_hash = {"extensions": persisted(USERS), "variables": {"n": 5}}
    missing = await get(acme.client, acme.token, by_hash)
    assert codes(missing) == ["PERSISTED_QUERY_NOT_FOUND"]
    assert missing.headers["cache-control"] == "no-store"
    registered = await get(acme.client, acme.token, {**by_hash, "query": USERS})
    assert registered.json()["data"]["users"]["edges"] == [{"node": {"email": "a@acme.test"}}]
    hit = await get(acme.client, acme.token, by_hash)
    assert hit.json()["data"] == registered.json()["data"]
    assert hit.headers["cache-control"] == "private, max-age=0"
    assert hit.headers["vary"] == "Authorization, Accept"


async def test_a_persisted_mutation_is_refused_over_get(acme: Api) -> None:
    await post(acme.client, acme.token, {"query": CREATE, "extensions": persisted(CREATE)})
    variables = {"i": {"email": "g@acme.test", "name": "G"}}
    response = await get(
        acme.client, acme.token, {"extensions": persisted(CREATE), "variables": variables}
    )
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert (await acme.data('{ userByEmail(email: "g@acme.test") { id } }')) == {
        "userByEmail": None
    }


async def test_a_persisted_mutation_keeps_its_idempotency_key(acme: Api) -> None:
    variables = {"i": {"email": "k@acme.test", "name": "K"}}
    key = {"Idempotency-Key": "order-1"}
    first = await post(
        acme.client,
        acme.token,
        {"query": CREATE, "variables": variables, "extensions": persisted(CREATE)},
        key,
    )
    assert first.json()["data"] == {"createUser": {"email": "k@acme.test"}}
    retry = await post(
        acme.client, acme.token, {"variables": variables, "extensions": persisted(CREATE)}, key
    )
    assert retry.headers.get("idempotent-replayed") == "true", retry.text
    assert retry.json() == first.json()


async def test_a_wrong_hash_is_refused_and_never_registered(acme: Api) -> None:
    lying = {"query": USERS, "extensions": persisted("{ viewer { tenant } }")}
    response = await post(acme.client, acme.token, lying)
    assert response.status_code == 400
    assert codes(response) == ["PERSISTED_QUERY_HASH_MISMATCH"]
    later = await post(acme.client, acme.token, {"extensions": lying["extensions"]})
    assert codes(later) == ["PERSISTED_QUERY_NOT_FOUND"]


BAD_SHAPES: list[Any] = [
    "abc",
    [],
    {"version": 2, "sha256Hash": "0" * 64},
    {"version": "1", "sha256Hash": "0" * 64},
    {"version": True, "sha256Hash": "0" * 64},
    {"version": 1},
    {"version": 1, "sha256Hash": 5},
    {"version": 1, "sha256Hash": None},
    {"version": 1, "sha256Hash": "A" * 64},
    {"version": 1, "sha256Hash": "a" * 63},
    {"version": 1, "sha256Hash": "a" * 10240},
]


@pytest.mark.parametrize("shape", BAD_SHAPES)
async def test_malformed_persisted_query_is_a_bad_request(acme: Api, shape: Any) -> None:
    for response in (
        await post(acme.client, acme.token, {"extensions": {"persistedQuery": shape}}),
        await get(acme.client, acme.token, {"extensions": {"persistedQuery": shape}}),
    ):
        if response.status_code == 414:  # a GET's query string is cut short before that
            assert codes(response) == ["REQUEST_TOO_LARGE"]
            continue
        assert response.status_code == 400, response.text
        assert codes(response) == ["BAD_REQUEST"]
        assert "persistedQuery" in response.json()["errors"][0]["message"]


async def test_get_extensions_must_be_json(acme: Api) -> None:
    response = await acme.client.get(
        "/graphql",
        params={"extensions": "{nope"},
        headers={"Authorization": f"Bearer {acme.token}"},
    )
    assert response.status_code == 400
    assert codes(response) == ["BAD_REQUEST"]


async def test_a_hash_shows_each_tenant_only_its_own_data(acme: Api, globex: Api) -> None:
    await acme.create_user("a@acme.test")
    await globex.create_user("g@globex.test")
    await post(acme.client, acme.token, {"query": USERS, "extensions": persisted(USERS)})
    hit = await post(globex.client, globex.token, {"extensions": persisted(USERS)})
    assert hit.json()["data"] == {"users": {"edges": [{"node": {"email": "g@globex.test"}}]}}


ODD_REQUESTS: list[dict[str, Any]] = [
    {"query": 5, "extensions": persisted(USERS)},
    {"extensions": persisted(USERS), "variables": [1]},
    {"extensions": [persisted(USERS)]},
    {"extensions": 5},
]


@pytest.mark.parametrize("body", ODD_REQUESTS)
async def test_odd_requests_around_a_hash_are_bad_requests(acme: Api, body: dict[str, Any]) -> None:
    await post(acme.client, acme.token, {"query": USERS, "extensions": persisted(USERS)})
    responses = [await post(acme.client, acme.token, body)]
    if "query" not in body:  # a GET's query is always a string
        responses.append(await get(acme.client, acme.token, body))
    for response in responses:
        assert response.status_code == 400, response.text
        assert codes(response) == ["BAD_REQUEST"]


TOO_LONG = "{ viewer { tenant } } #" + "x" * 70_000


@pytest.mark.parametrize("text", ["{ nope }", "{ viewer {", TOO_LONG])
async def test_a_document_that_does_not_prepare_is_not_registered(acme: Api, text: str) -> None:
    first = await post(acme.client, acme.token, {"query": text, "extensions": persisted(text)})
    assert codes(first)
    later = await post(acme.client, acme.token, {"extensions": persisted(text)})
    assert codes(later) == ["PERSISTED_QUERY_NOT_FOUND"]


async def test_a_hit_is_neither_parsed_nor_validated_again(
    acme: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "query Again { viewer { tenant subject } }"
    await post(acme.client, acme.token, {"query": text, "extensions": persisted(text)})
    calls: list[str] = []

    def parsed(*args: Any) -> Any:
        calls.append("parse")
        return parse_limited(*args)

    def validated(*args: Any) -> Any:
        calls.append("validate")
        return validate(*args)

    monkeypatch.setattr(admission, "parse_limited", parsed)
    monkeypatch.setattr(admission, "validate", validated)
    for _ in range(3):
        hit = await post(acme.client, acme.token, {"extensions": persisted(text)})
        assert hit.json()["data"]["viewer"]["tenant"] == "acme"
    assert calls == []

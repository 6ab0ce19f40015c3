"""Hostile input at the HTTP edge: variables that do not coerce, bodies that are no GraphQL
request, malformed tokens and ids spelled another way. Each is the client's mistake: an error
with its code (never INTERNAL or a 500), a warning without a traceback, and nothing written.
Every test runs on both executors (compiled execution and Strawberry's)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import httpx
import jwt
import pytest

from keygraph.plan import Item, Scan
from keygraph.stores.embedded.store import EmbeddedStore
from server.edge.app import create_app
from server.settings import EXECUTOR_KINDS, Settings
from tests.server.conftest import SECRET, Api

MODERN = "application/graphql-response+json"
LEGACY = "application/json"
USER_ID = "@user"
"""Stands for the id of a user each test creates first."""


@pytest.fixture(params=EXECUTOR_KINDS)
async def client(
    request: pytest.FixtureRequest, settings: Settings, store: EmbeddedStore
) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(replace(settings, executor=request.param), store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://keygraph.test") as c:
        yield c


@pytest.fixture
async def user_id(acme: Api) -> str:
    user = await acme.create_user("ann@example.com", "Ann")
    found: str = user["id"]
    return found


async def _items(store: EmbeddedStore) -> list[Item]:
    return (await store.scan(Scan())).items


def _headers(token: str, accept: str, content_type: str = "application/json") -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": accept, "Content-Type": content_type}


def _with_user(variables: Any, user_id: str) -> Any:
    return json.loads(json.dumps(variables).replace(f'"{USER_ID}"', json.dumps(user_id)))


def _assert_quiet_warning(caplog: pytest.LogCaptureFixture, code: str) -> None:
    """One warning request line with the code; no error, no traceback anywhere."""
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert not [r for r in caplog.records if r.exc_info], caplog.text
    lines = [r for r in caplog.records if r.name == "keygraph.request"]
    assert [(r.levelno, getattr(r, "code", None)) for r in lines] == [(logging.WARNING, code)]


def _assert_request_error(response: httpx.Response, accept: str, status: int, code: str) -> None:
    """A request error: no data for graphql-response clients (HTTP 400 or `status`), data
    null for application/json ones (HTTP 200 unless the request was refused)."""
    assert response.headers["content-type"].startswith(accept)
    body = response.json()
    assert [error["extensions"]["code"] for error in body["errors"]] == [code] * len(
        body["errors"]
    ), body
    assert all("path" not in error for error in body["errors"])
    if accept == MODERN:
        assert response.status_code == (400 if status == 200 else status)
        assert "data" not in body
    else:
        assert response.status_code == status
        assert body.get("data") is None


USERS = "query($f: Int) { users(first: $f) { edges { node { id } } } }"
SHOPS = "query($lat: Float!) { shopsNear(lat: $lat, lng: 0, radiusKm: 1) { distanceKm } }"
BY_EMAIL = "query($e: String!) { userByEmail(email: $e) { id } }"
USER = "query($u: ID!) { user(id: $u) { id } }"
INCLUDE = "query($b: Boolean!) { viewer @include(if: $b) { tenant } }"
BY_STATUS = "query($s: OrderStatus!) { ordersByStatus(status: $s) { edges { node { id } } } }"
ORDERS_FROM = (
    "query($u: ID!, $d: DateTime) { user(id: $u) { orders(from: $d) { edges { node { id } } } } }"
)
CREATE_USER = "mutation($i: CreateUserInput!) { createUser(input: $i) { id } }"
UPDATE_USER = "mutation($i: UpdateUserInput!) { updateUser(input: $i) { id } }"
DELETE_USER = "mutation($i: DeleteInput!) { deleteUser(input: $i) { deletedId } }"
CREATE_ORDER = "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }"
MEMBER = "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }"

_LINE = {"sku": "A-1", "name": "thing", "quantity": 1, "unitPriceCents": 100}


def _order(**changes: Any) -> dict[str, Any]:
    return {"userId": USER_ID, "currency": "EUR", "items": [_LINE], **changes}


BAD_VARIABLES = [
    # Int: no strings, no fractions, 32 bits, no booleans or lists
    pytest.param(USERS, {"f": "abc"}, id="int-string"),
    pytest.param(USERS, {"f": "1"}, id="int-numeric-string"),
    pytest.param(USERS, {"f": 1.5}, id="int-fraction"),
    pytest.param(USERS, {"f": -2147483649}, id="int-below-32-bits"),
    pytest.param(USERS, {"f": 2147483648}, id="int-above-32-bits"),
    pytest.param(USERS, {"f": 1e30}, id="int-huge-float"),
    pytest.param(USERS, {"f": True}, id="int-boolean"),
    pytest.param(USERS, {"f": [1]}, id="int-list"),
    pytest.param(USERS, {"f": {"n": 1}}, id="int-object"),
    # Float: numbers only
    pytest.param(SHOPS, {"lat": "1.5"}, id="float-string"),
    pytest.param(SHOPS, {"lat": "NaN"}, id="float-nan-string"),
    pytest.param(SHOPS, {"lat": "Infinity"}, id="float-infinity-string"),
    pytest.param(SHOPS, {"lat": True}, id="float-boolean"),
    pytest.param(SHOPS, {"lat": [1.0]}, id="float-list"),
    pytest.param(SHOPS, {"lat": None}, id="float-null-for-non-null"),
    pytest.param(SHOPS, {}, id="float-required-missing"),
    # String and ID
    pytest.param(BY_EMAIL, {"e": 5}, id="string-number"),
    pytest.param(BY_EMAIL, {"e": True}, id="string-boolean"),
    pytest.param(BY_EMAIL, {"e": ["a@b.c"]}, id="string-list"),
    pytest.param(BY_EMAIL, {"e": {"a": "b"}}, id="string-object"),
    pytest.param(BY_EMAIL, {"e": None}, id="string-null-for-non-null"),
    pytest.param(USER, {"u": 1.5}, id="id-fraction"),
    pytest.param(USER, {"u": True}, id="id-boolean"),
    pytest.param(USER, {"u": [USER_ID]}, id="id-list"),
    pytest.param(USER, {"u": {"id": USER_ID}}, id="id-object"),
    pytest.param(USER, {"u": None}, id="id-null-for-non-null"),
    pytest.param(USER, {}, id="id-required-missing"),
    # Boolean
    pytest.param(INCLUDE, {"b": "true"}, id="boolean-string"),
    pytest.param(INCLUDE, {"b": 1}, id="boolean-number"),
    pytest.param(INCLUDE, {"b": None}, id="boolean-null-for-non-null"),
    # enum
    pytest.param(BY_STATUS, {"s": "NOPE"}, id="enum-unknown"),
    pytest.param(BY_STATUS, {"s": "pending"}, id="enum-lower-case"),
    pytest.param(BY_STATUS, {"s": 1}, id="enum-number"),
    pytest.param(BY_STATUS, {"s": None}, id="enum-null-for-non-null"),
    # DateTime
    pytest.param(ORDERS_FROM, {"u": USER_ID, "d": "not a date"}, id="datetime-text"),
    pytest.param(ORDERS_FROM, {"u": USER_ID, "d": 5}, id="datetime-number"),
    pytest.param(ORDERS_FROM, {"u": USER_ID, "d": ""}, id="datetime-empty"),
    pytest.param(ORDERS_FROM, {"u": USER_ID, "d": "2024-13-45T00:00:00Z"}, id="datetime-month-13"),
    pytest.param(
        ORDERS_FROM, {"u": USER_ID, "d": "2024-01-01T00:00:00+99:00"}, id="datetime-zone-99h"
    ),
    # input objects and lists
    pytest.param(CREATE_USER, {"i": {"email": "bo@example.com"}}, id="input-missing-field"),
    pytest.param(
        CREATE_USER,
        {"i": {"email": "bo@example.com", "name": "Bo", "admin": True}},
        id="input-unknown-field",
    ),
    pytest.param(CREATE_USER, {"i": None}, id="input-null-for-non-null"),
    pytest.param(CREATE_USER, {"i": "bo@example.com"}, id="input-string"),
    pytest.param(
        CREATE_USER, {"i": [{"email": "bo@example.com", "name": "Bo"}]}, id="input-as-list"
    ),
    pytest.param(CREATE_USER, {"i": {"email": 5, "name": "Bo"}}, id="input-field-wrong-type"),
    pytest.param(CREATE_USER, {"i": {"email": None, "name": "Bo"}}, id="input-field-null"),
    pytest.param(
        DELETE_USER, {"i": {"id": USER_ID, "expectedVersion": 2147483648}}, id="version-33-bits"
    ),
    pytest.param(DELETE_USER, {"i": {"id": USER_ID, "expectedVersion": "1"}}, id="version-string"),
    pytest.param(
        DELETE_USER, {"i": {"id": USER_ID, "expectedVersion": 1.5}}, id="version-fraction"
    ),
    pytest.param(DELETE_USER, {"i": {"id": USER_ID, "expectedVersion": None}}, id="version-null"),
    pytest.param(DELETE_USER, {"i": {"id": USER_ID}}, id="version-missing"),
    pytest.param(
        UPDATE_USER,
        {"i": {"id": USER_ID, "expectedVersion": 1, "name": 5}},
        id="update-name-number",
    ),
    pytest.param(CREATE_ORDER, {"i": _order(items="A-1")}, id="list-of-a-string"),
    pytest.param(CREATE_ORDER, {"i": _order(items=[None])}, id="list-null-item"),
    pytest.param(CREATE_ORDER, {"i": _order(items=None)}, id="list-null"),
    pytest.param(CREATE_ORDER, {"i": _order(items=[{**_LINE, "quantity": "2"}])}, id="item-string"),
    pytest.param(
        CREATE_ORDER, {"i": _order(items=[{**_LINE, "quantity": 2**31}])}, id="item-33-bits"
    ),
    pytest.param(CREATE_ORDER, {"i": _order(items=[{"sku": "A-1"}])}, id="item-missing-fields"),
    pytest.param(CREATE_ORDER, {"i": _order(userId=1.5)}, id="order-user-fraction"),
    pytest.param(MEMBER, {"g": USER_ID, "u": [USER_ID]}, id="argument-list-for-id"),
]


@pytest.mark.parametrize("accept", [MODERN, LEGACY])
@pytest.mark.parametrize(("query", "variables"), BAD_VARIABLES)
async def test_variables_that_do_not_coerce_are_bad_user_input(
    client: httpx.AsyncClient,
    acme_token: str,
    user_id: str,
    store: EmbeddedStore,
    caplog: pytest.LogCaptureFixture,
    query: str,
    variables: dict[str, Any],
    accept: str,
) -> None:
    before = await _items(store)
    caplog.clear()
    caplog.set_level(logging.INFO)
    response = await client.post(
        "/graphql",
        json={"query": query, "variables": _with_user(variables, user_id)},
        headers=_headers(acme_token, accept),
    )
    _assert_request_error(response, accept, 200, "BAD_USER_INPUT")
    _assert_quiet_warning(caplog, "BAD_USER_INPUT")
    assert await _items(store) == before


_DEEP_LIST = "[" * 1020 + "]" * 1020
_DEEP_OBJECT = '{"a": ' * 1020 + "1" + "}" * 1020


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        (USERS, f'{{"f": {_DEEP_LIST}}}'),  # a `first`, which the cost depends on
        (INCLUDE, f'{{"b": {_DEEP_LIST}}}'),  # an `if`, which it depends on too
        (BY_EMAIL, f'{{"e": {_DEEP_OBJECT}}}'),
        (CREATE_USER, f'{{"i": {_DEEP_OBJECT}}}'),
    ],
    ids=["first", "if", "string", "input"],
)
async def test_variables_nested_too_deeply_are_bad_user_input(
    client: httpx.AsyncClient,
    acme_token: str,
    caplog: pytest.LogCaptureFixture,
    query: str,
    variables: str,
) -> None:
    caplog.set_level(logging.INFO)
    content = f'{{"query": {json.dumps(query)}, "variables": {variables}}}'.encode()
    response = await client.post("/graphql", content=content, headers=_headers(acme_token, MODERN))
    _assert_request_error(response, MODERN, 200, "BAD_USER_INPUT")
    _assert_quiet_warning(caplog, "BAD_USER_INPUT")


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        (USERS, '{"f": "abc"}'),
        (USERS, '{"f": 2147483648}'),
        (BY_STATUS, '{"s": "NOPE"}'),
        (ORDERS_FROM, '{"u": "VXNlcjox", "d": "not a date"}'),
    ],
    ids=["int-string", "int-33-bits", "enum-unknown", "datetime-text"],
)
async def test_variables_that_do_not_coerce_in_a_get_are_bad_user_input(
    client: httpx.AsyncClient,
    acme_token: str,
    caplog: pytest.LogCaptureFixture,
    query: str,
    variables: str,
) -> None:
    caplog.set_level(logging.INFO)
    response = await client.get(
        "/graphql",
        params={"query": query, "variables": variables},
        headers=_headers(acme_token, MODERN),
    )
    _assert_request_error(response, MODERN, 200, "BAD_USER_INPUT")
    _assert_quiet_warning(caplog, "BAD_USER_INPUT")


@pytest.mark.parametrize(
    ("query", "variables", "data"),
    [
        (USERS, {"f": 1.0}, {"users": {"edges": [{"node": {"id": USER_ID}}]}}),
        (USERS, {"f": None}, {"users": {"edges": [{"node": {"id": USER_ID}}]}}),
        (
            USERS,
            {"f": 1, "unused": [1, {"x": None}]},
            {"users": {"edges": [{"node": {"id": USER_ID}}]}},
        ),
        (USER, {"u": USER_ID}, {"user": {"id": USER_ID}}),
        (INCLUDE, {"b": False}, {}),
    ],
    ids=["int-integral-float", "int-null", "unused-variable", "id", "boolean"],
)
async def test_values_graphql_coerces_are_taken(
    client: httpx.AsyncClient,
    acme_token: str,
    user_id: str,
    query: str,
    variables: dict[str, Any],
    data: dict[str, Any],
) -> None:
    response = await client.post(
        "/graphql",
        json={"query": query, "variables": _with_user(variables, user_id)},
        headers=_headers(acme_token, MODERN),
    )
    assert response.status_code == 200
    assert response.json()["data"] == _with_user(data, user_id)


@pytest.mark.parametrize(
    "when", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "2024-01-01T00:00:00"]
)
async def test_datetimes_a_key_cannot_hold_are_bad_user_input_at_their_field(
    client: httpx.AsyncClient,
    acme_token: str,
    user_id: str,
    caplog: pytest.LogCaptureFixture,
    when: str,
) -> None:
    caplog.set_level(logging.INFO)
    response = await client.post(
        "/graphql",
        json={"query": ORDERS_FROM, "variables": {"u": user_id, "d": when}},
        headers=_headers(acme_token, MODERN),
    )
    assert response.status_code == 200
    body = response.json()
    assert body["data"] == {"user": {"orders": None}}
    assert [(e["path"], e["extensions"]["code"]) for e in body["errors"]] == [
        (["user", "orders"], "BAD_USER_INPUT")
    ]
    _assert_quiet_warning(caplog, "BAD_USER_INPUT")


VIEWER = '{"query": "{ viewer { tenant } }"'

BAD_BODIES = [
    pytest.param(b'"hello"', "must be a JSON object, not a string", id="string"),
    pytest.param(b"123", "must be a JSON object, not a number", id="number"),
    pytest.param(b"1.5", "must be a JSON object, not a number", id="fraction"),
    pytest.param(b"null", "must be a JSON object, not null", id="null"),
    pytest.param(b"true", "must be a JSON object, not a boolean", id="boolean"),
    pytest.param(b"[]", "batched requests", id="empty-batch"),
    pytest.param(f"[{VIEWER}}}]".encode(), "batched requests", id="batch"),
    pytest.param(b'{"query": 5}', "`query` must be a string", id="query-number"),
    pytest.param(b'{"query": ["{ viewer { tenant } }"]}', "`query` must be", id="query-list"),
    pytest.param(b"{}", "No GraphQL query", id="no-query"),
    pytest.param(b'{"query": ""}', "No GraphQL query", id="empty-query"),
    pytest.param(f'{VIEWER}, "operationName": 5}}'.encode(), "`operationName`", id="name-number"),
    pytest.param(f'{VIEWER}, "operationName": ["a"]}}'.encode(), "`operationName`", id="name-list"),
    pytest.param(f'{VIEWER}, "extensions": [1]}}'.encode(), "`extensions`", id="extensions-list"),
    pytest.param(f'{VIEWER}, "extensions": "x"}}'.encode(), "`extensions`", id="extensions-text"),
    pytest.param(f'{VIEWER}, "variables": [1]}}'.encode(), "`variables`", id="variables-list"),
    pytest.param(f'{VIEWER}, "variables": "{{}}"}}'.encode(), "`variables`", id="variables-text"),
    pytest.param(f'{VIEWER}, "variables": 5}}'.encode(), "`variables`", id="variables-number"),
    pytest.param(f'{VIEWER}, "variables": {{"a": NaN}}}}'.encode(), "as JSON", id="variables-nan"),
    pytest.param(f'{VIEWER}, "variables": {{"a": 1e999}}}}'.encode(), "as JSON", id="number-inf"),
    pytest.param(b"\xff\xfe{", "as JSON", id="not-utf8"),
    pytest.param(b'{"query": "{ viewer { tenant } }\xff"}', "as JSON", id="not-utf8-string"),
    pytest.param(b"{not json", "as JSON", id="not-json"),
    pytest.param(b"", "as JSON", id="empty"),
]


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8"])
@pytest.mark.parametrize("accept", [MODERN, LEGACY])
@pytest.mark.parametrize(("content", "message"), BAD_BODIES)
async def test_bodies_that_are_no_graphql_request_are_400(
    client: httpx.AsyncClient,
    acme_token: str,
    caplog: pytest.LogCaptureFixture,
    content: bytes,
    message: str,
    accept: str,
    content_type: str,
) -> None:
    caplog.set_level(logging.INFO)
    response = await client.post(
        "/graphql", content=content, headers=_headers(acme_token, accept, content_type)
    )
    _assert_request_error(response, accept, 400, "BAD_REQUEST")
    assert message in response.json()["errors"][0]["message"]
    _assert_quiet_warning(caplog, "BAD_REQUEST")


@pytest.mark.parametrize("content", [b'"hello"', b"[]", b"{not json", b'{"operationName": 5}'])
async def test_a_body_that_is_no_graphql_request_claims_no_idempotency_key(
    client: httpx.AsyncClient,
    acme_token: str,
    store: EmbeddedStore,
    content: bytes,
) -> None:
    before = await _items(store)
    headers = {**_headers(acme_token, MODERN), "Idempotency-Key": "k-1"}
    refused = await client.post("/graphql", content=content, headers=headers)
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    assert await _items(store) == before
    mutation = 'mutation { createGroup(input: {name: "g"}) { name } }'
    fixed = await client.post("/graphql", json={"query": mutation}, headers=headers)
    assert fixed.json()["data"] == {"createGroup": {"name": "g"}}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"query": "{ viewer { tenant } }", "variables": "[1]"}, "`variables`"),
        ({"query": "{ viewer { tenant } }", "variables": '"x"'}, "`variables`"),
        ({"query": "{ viewer { tenant } }", "variables": "{bad"}, "as JSON"),
        ({"query": "{ viewer { tenant } }", "extensions": "[1]"}, "`extensions`"),
        ({"query": "{ viewer { tenant } }", "extensions": "{bad"}, "as JSON"),
        ({"query": ""}, "No GraphQL query"),
        ({}, "No GraphQL query"),
    ],
    ids=[
        "variables-list",
        "variables-string",
        "variables-no-json",
        "extensions-list",
        "extensions-no-json",
        "empty-query",
        "no-query",
    ],
)
async def test_get_requests_with_bad_parameters_are_400(
    client: httpx.AsyncClient,
    acme_token: str,
    caplog: pytest.LogCaptureFixture,
    params: dict[str, str],
    message: str,
) -> None:
    caplog.set_level(logging.INFO)
    response = await client.get("/graphql", params=params, headers=_headers(acme_token, MODERN))
    _assert_request_error(response, MODERN, 400, "BAD_REQUEST")
    assert message in response.json()["errors"][0]["message"]
    _assert_quiet_warning(caplog, "BAD_REQUEST")


def _signed(payload: bytes) -> str:
    """An HS256 token over any payload bytes (NaN, huge numbers, no object at all)."""

    def b64(data: bytes) -> bytes:
        return base64.urlsafe_b64encode(data).rstrip(b"=")

    signing_input = b64(b'{"alg":"HS256","typ":"JWT"}') + b"." + b64(payload)
    signature = hmac.new(SECRET.encode(), signing_input, hashlib.sha256).digest()
    return (signing_input + b"." + b64(signature)).decode()


_LATER = 4102444800  # 2100-01-01


def _claims(**claims: Any) -> str:
    return jwt.encode({"tenant": "acme", "exp": _LATER, **claims}, SECRET, algorithm="HS256")


BAD_TOKENS = [
    pytest.param(_claims(exp=10**400), id="exp-400-digits"),
    pytest.param(_claims(exp=10**30), id="exp-past-year-9999"),
    pytest.param(_claims(exp=1e308), id="exp-huge-float"),
    pytest.param(_claims(exp="4102444800"), id="exp-string"),
    pytest.param(_claims(exp="soon"), id="exp-text"),
    pytest.param(_claims(exp=-5), id="exp-negative"),
    pytest.param(_claims(exp=None), id="exp-null"),
    pytest.param(_claims(exp=True), id="exp-boolean"),
    pytest.param(_claims(exp=[_LATER]), id="exp-list"),
    pytest.param(_claims(exp={"at": _LATER}), id="exp-object"),
    pytest.param(_signed(b'{"tenant": "acme", "exp": NaN}'), id="exp-nan"),
    pytest.param(_signed(b'{"tenant": "acme", "exp": Infinity}'), id="exp-infinity"),
    pytest.param(_signed(b'{"tenant": "acme", "exp": 1e999}'), id="exp-1e999"),
    pytest.param(
        _signed(b'{"tenant": "acme", "exp": 1' + b"0" * 5000 + b"}"), id="exp-5000-digits"
    ),
    pytest.param(_claims(iat=10**400), id="iat-400-digits"),
    pytest.param(_claims(iat="0"), id="iat-string"),
    pytest.param(_claims(iat=True), id="iat-boolean"),
    pytest.param(_signed(b'{"tenant": "acme", "exp": 4102444800, "iat": NaN}'), id="iat-nan"),
    pytest.param(_claims(nbf=10**400), id="nbf-400-digits"),
    pytest.param(_claims(nbf=-(10**400)), id="nbf-minus-400-digits"),
    pytest.param(_claims(nbf="0"), id="nbf-string"),
    pytest.param(_claims(nbf=[0]), id="nbf-list"),
    pytest.param(_claims(tenant=5), id="tenant-number"),
    pytest.param(_claims(tenant=["acme"]), id="tenant-list"),
    pytest.param(_claims(tenant={"id": "acme"}), id="tenant-object"),
    pytest.param(_claims(tenant=""), id="tenant-empty"),
    pytest.param(_claims(tenant=None), id="tenant-null"),
    pytest.param(_claims(tenant="a" * 129), id="tenant-too-long"),
    pytest.param(_claims(sub=5), id="sub-number"),
    pytest.param(_claims(sub={"id": "alice"}), id="sub-object"),
    pytest.param(_claims(sub=["alice"]), id="sub-list"),
    pytest.param(_claims(roles=5), id="roles-number"),
    pytest.param(_claims(roles={"admin": True}), id="roles-object"),
    pytest.param(_claims(roles=[["admin"]]), id="roles-nested-list"),
    pytest.param(_claims(roles=[""]), id="roles-empty-name"),
    pytest.param(_claims(roles=["admin"] * 1000), id="roles-thousand"),
    pytest.param(_signed(b"[1]"), id="payload-list"),
    pytest.param(_signed(b'"acme"'), id="payload-string"),
    pytest.param(_signed(b"null"), id="payload-null"),
]


@pytest.mark.parametrize("token", BAD_TOKENS)
async def test_signed_tokens_with_malformed_claims_are_401(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture, token: str
) -> None:
    caplog.set_level(logging.INFO)
    response = await client.post(
        "/graphql", json={"query": "{ viewer { tenant } }"}, headers=_headers(token, MODERN)
    )
    assert response.status_code == 401
    assert response.headers["content-type"].startswith(MODERN)
    assert response.headers["www-authenticate"] == "Bearer"
    assert [e["extensions"]["code"] for e in response.json()["errors"]] == ["UNAUTHENTICATED"]
    _assert_quiet_warning(caplog, "UNAUTHENTICATED")


def _respellings(global_id: str) -> list[str]:
    """Other spellings of a global id that decode to the same bytes."""
    raw = base64.urlsafe_b64decode(global_id + "=" * (-len(global_id) % 4))
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    stray_bits = [
        global_id[:-1] + c
        for c in alphabet
        if c != global_id[-1]
        and base64.urlsafe_b64decode(global_id[:-1] + c + "=" * (-len(global_id) % 4)) == raw
    ]
    assert stray_bits, "the id's last character has no unused bits"
    return [
        global_id + "=" * (-len(global_id) % 4),  # padded as standard base64 would be
        global_id + "====",
        f" {global_id}",
        f"{global_id}\n",
        f"{global_id[:4]} {global_id[4:]}",
        f"{global_id}!",
        stray_bits[0],
    ]


@pytest.mark.parametrize("spelling", range(7))
async def test_a_global_id_has_one_spelling(
    client: httpx.AsyncClient,
    acme_token: str,
    user_id: str,
    store: EmbeddedStore,
    caplog: pytest.LogCaptureFixture,
    spelling: int,
) -> None:
    other = _respellings(user_id)[spelling]
    assert other != user_id
    before = await _items(store)
    caplog.set_level(logging.INFO)
    for query, variables, data in [
        (USER, {"u": other}, {"user": None}),
        ("query($u: ID!) { node(id: $u) { id } }", {"u": other}, {"node": None}),
        (
            DELETE_USER,
            {"i": {"id": other, "expectedVersion": 1}},
            None,
        ),
    ]:
        caplog.clear()
        response = await client.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers=_headers(acme_token, MODERN),
        )
        assert response.status_code == 200
        body = response.json()
        assert body["data"] == data
        assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_USER_INPUT"]
        assert "is not a valid id" in body["errors"][0]["message"]
        _assert_quiet_warning(caplog, "BAD_USER_INPUT")
    assert await _items(store) == before

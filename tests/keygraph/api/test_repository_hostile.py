"""Hostile requests to this repository's API as `keygraph serve --package generated
--extend server.extension` serves it, on both stores: the hand-written server's hostile
bodies, headers and documents (tests/server/fuzz/bodies.py, documents.py), requests at and
past each of keygraph serve's own limits, and variables of every root field drawn of the
right type at its edges, of the wrong one, or any JSON (served_variables.py). Each answer has
a code and is never a 5xx or INTERNAL, carries no traceback or source path, logs no error;
each request at or past a limit gets the status and code admission.py gives it; a document
costs a bounded number of Python calls a byte; a refused request writes nothing, and the
other tenant's items are the same afterwards.

CI sends every fixed request and EXAMPLES variables; KEYGRAPH_FUZZ_EXAMPLES=N sends N."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import httpx
import pytest

from keygraph.serve import Served
from keygraph.serve.limits import MAX_BODY_BYTES, MAX_DOCUMENT, MAX_FIELDS, MAX_TOKENS
from keygraph.serve.served import MAX_ROOT_FIELDS
from tests.conftest import StoreFactory
from tests.keygraph.api import served_variables
from tests.keygraph.api.served_target import IDS, open_served
from tests.keygraph.api.served_variables import ODD_IDS
from tests.server.fuzz.bodies import REQUESTS, Request
from tests.server.fuzz.checks import Failures, Work
from tests.server.fuzz.documents import SHAPES
from tests.server.fuzz.target import HUNT, STORES, Target, errors_logged, generate

EXAMPLES = {"embedded": 400, "dynamodb-local": 100}
CALLS_PER_BYTE = 100
BASE_CALLS = 60_000
"""What a document may cost in Python calls (tests/server/fuzz/documents.py's shapes)."""
HANG_SECONDS = 20.0
GROUP = 'createGroup(input: {name: "x"}) { id }'
SHOP = "mutation($i: CreateShopInput!) { createShop(input: $i) { id } }"
VERSION = 'mutation($v: Int!) { deleteShop(input: {id: "x", expectedVersion: $v}) { complete } }'
TWICE = "mutation($i: CreateGroupInput!, $i: CreateGroupInput!) { createGroup(input: $i) { id } }"
DELETE_USER = "mutation($i: DeleteInput!) { deleteUser(input: $i) { complete } }"
PAGES = "users(first: 100) { edges { node { orders(first: 100) { edges { cursor } } } } }"


def _post(label: str, body: object, **headers: str) -> Request:
    return Request(label, content=json.dumps(body).encode(), headers=headers)


def _query(label: str, document: str) -> Request:
    return _post(label, {"query": document})


def _shop(label: str, **position: object) -> Request:
    """createShop with a position given as variables."""
    return _post(label, {"query": SHOP, "variables": {"i": {"name": "x", **position}}})


def _aliases(count: int, field: str) -> str:
    return "mutation { " + " ".join(f"a{i}: {field}" for i in range(count)) + " }"


def _spread(aliases: int, fields: int) -> str:
    """`aliases` aliases of a field, each spreading a fragment of `fields` fields."""
    spreads = " ".join(f"a{i}: viewer {{ ...F }}" for i in range(aliases))
    return f"{{ {spreads} }} fragment F on Viewer {{ {'tenant ' * fields}}}"


def _get(label: str, *params: tuple[str, str]) -> Request:
    return Request(label, method="GET", params=params)


NO_SHOP = 'deleteShop(input: {id: "x", expectedVersion: 1}) { complete }'
TOO_COMPLEX = (400, "QUERY_TOO_COMPLEX")
REFUSED = (400, "BAD_REQUEST")
NOT_HERE = (405, "BAD_REQUEST")
NOT_COERCED = (400, "BAD_USER_INPUT")
INVALID = (400, "GRAPHQL_VALIDATION_FAILED")
REFUSED_AT_ITS_FIELD = (200, "BAD_USER_INPUT")
ADMISSION: list[tuple[Request, tuple[int, str | None]]] = [
    # (request, (status, the code of its first error; None: it ran))
    (_query("a document past its characters", "{" + " " * MAX_DOCUMENT + "}"), TOO_COMPLEX),
    (
        _query("a document past its tokens", "{ viewer { " + "tenant " * MAX_TOKENS + "} }"),
        TOO_COMPLEX,
    ),
    (_query("fields past the limit", _spread(MAX_FIELDS // 40 + 1, 40)), TOO_COMPLEX),
    (
        _query("aliases of a mutation at the limit", _aliases(MAX_ROOT_FIELDS, NO_SHOP)),
        REFUSED_AT_ITS_FIELD,
    ),
    (
        _query("aliases of a mutation past the limit", _aliases(MAX_ROOT_FIELDS + 1, GROUP)),
        TOO_COMPLEX,
    ),
    (_query("aliases of a mutation far past the limit", _aliases(2_000, GROUP)), TOO_COMPLEX),
    (
        _query("pages past the cost", "{ " + " ".join(f"p{i}: {PAGES}" for i in range(3)) + " }"),
        TOO_COMPLEX,
    ),
    (_get("a mutation in a GET", ("query", f"mutation {{ {GROUP} }}")), NOT_HERE),
    (
        _get(
            "a mutation named in a GET",
            ("query", f"query Q {{ viewer {{ tenant }} }} mutation M {{ {GROUP} }}"),
            ("operationName", "M"),
        ),
        NOT_HERE,
    ),
    (
        _query("a subscription in a POST", 'subscription { userChanged(id: "x") { cursor } }'),
        NOT_HERE,
    ),
    (
        Request(
            "a mutation in a PUT",
            method="PUT",
            content=json.dumps({"query": f"mutation {{ {GROUP} }}"}).encode(),
        ),
        NOT_HERE,
    ),
    (
        Request(
            "a mutation in a HEAD's body",
            method="HEAD",
            content=json.dumps({"query": f"mutation {{ {GROUP} }}"}).encode(),
        ),
        (400, None),
    ),
    (_post("a batch of mutations", [{"query": f"mutation {{ {GROUP} }}"}] * 3), REFUSED),
    (_post("a batch of one query", [{"query": "{ viewer { tenant } }"}]), REFUSED),
    (_post("an input a string", {"query": SHOP, "variables": {"i": "x"}}), NOT_COERCED),
    (_post("an input a list", {"query": SHOP, "variables": {"i": [{"name": "x"}]}}), NOT_COERCED),
    (_shop("a position a string", lat="0", lng=0), NOT_COERCED),
    (_shop("a position past any float", lat=10**400, lng=0), REFUSED),  # no JSON number
    (_shop("a position of 10**30", lat=10**30, lng=0), REFUSED_AT_ITS_FIELD),
    (_shop("a position of 1e308", lat=0, lng=1e308), REFUSED_AT_ITS_FIELD),
    (
        _query(
            "a literal position past any float",
            'mutation { createShop(input: {name: "x", lat: 1e400, lng: 0}) { id } }',
        ),
        REFUSED_AT_ITS_FIELD,
    ),
    (_post("a version past Int", {"query": VERSION, "variables": {"v": 2**31}}), NOT_COERCED),
    (
        _post("a variable undeclared", {"query": "{ viewer { tenant } }", "variables": {"i": 1}}),
        (200, None),
    ),
    (
        _post("a variable declared twice", {"query": TWICE, "variables": {"i": {"name": "x"}}}),
        INVALID,
    ),
    (
        _post(
            "an id nested past the recursion limit",
            {"query": DELETE_USER, "variables": {"i": {"id": ODD_IDS[0], "expectedVersion": 1}}},
        ),
        REFUSED_AT_ITS_FIELD,
    ),
    (
        Request("a body past the cap", content=b" " * (MAX_BODY_BYTES + 1)),
        (413, "REQUEST_TOO_LARGE"),
    ),
    (Request("no token", content=b"{}", headers={"authorization": ""}), (401, "UNAUTHENTICATED")),
]
"""Requests at and past keygraph serve's limits, and the status and first code of each."""


@pytest.fixture(params=STORES)
async def target(
    request: pytest.FixtureRequest, store_factory: StoreFactory
) -> AsyncIterator[tuple[Target, Served, str]]:
    async with open_served(request.param, store_factory) as (app, served):
        yield app, served, request.param


async def send(target: Target, request: Request) -> httpx.Response:
    """The request as acme's admin (its own headers win), a JSON body unless it says not."""
    headers = {"content-type": "application/json"}
    for name, value in (*target.acme.items(), *request.headers.items()):
        headers[name.lower()] = value
    return await target.client.request(
        request.method, "/graphql", content=request.stream(), params=request.params, headers=headers
    )


def _first_code(body: dict[str, object] | None) -> str | None:
    errors = (body or {}).get("errors")
    if not isinstance(errors, list) or not errors:
        return None
    return str(errors[0]["extensions"]["code"])


async def test_hostile_requests_are_refused_with_codes(
    target: tuple[Target, Served, str], caplog: pytest.LogCaptureFixture
) -> None:
    app, _, _ = target
    caplog.set_level(logging.WARNING)
    failures = Failures()
    before = await app.partition("globex")
    acme = await app.partition("acme")
    shapes = [
        _query(f"{shape.name} at {size}", shape.make(size))
        for shape in SHAPES
        for size in shape.sizes
    ]
    expected = {request.label: answer for request, answer in ADMISSION}
    for request in REQUESTS + shapes + [request for request, _ in ADMISSION]:
        caplog.clear()
        with Work() as work:
            try:
                response = await asyncio.wait_for(send(app, request), HANG_SECONDS)
            except TimeoutError:
                failures.add("hangs", request.label)
                continue
        allowed = BASE_CALLS + CALLS_PER_BYTE * len(request.content)
        if work.calls > allowed:
            failures.add("work beyond the allowance", f"{request.label}: {work.calls} calls")
        if request.method == "HEAD" or response.headers.get("content-type", "").startswith(
            "text/html"
        ):
            failures.status(response, request.label)
            body = None
        else:
            body = failures.answer(response, request.label)
        if request.label in expected:
            got = (response.status_code, _first_code(body))
            if got != expected[request.label]:
                failures.add("not the answer admission gives", f"{request.label}: {got}")
        for record in errors_logged(caplog.records):
            failures.add(f"error logged: {record}", request.label)
    if await app.partition("globex") != before:
        failures.add("another tenant's items changed", "globex")
    if await app.partition("acme") != acme:
        failures.add("a refused request wrote", "acme's items changed")
    assert not failures, "\n" + failures.report()


async def test_variables_of_every_root_field_are_refused_with_codes(
    target: tuple[Target, Served, str], caplog: pytest.LogCaptureFixture
) -> None:
    app, served, kind = target
    caplog.set_level(logging.WARNING)
    failures = Failures()
    before = await app.partition("globex")
    acme = await app.partition("acme")
    ids, emails = await app.ids(query=IDS)
    drawn = generate(
        served_variables.operations(served.schema, ids, emails), HUNT or EXAMPLES[kind]
    )
    seen: set[str] = set()
    for document, variables in drawn:
        caplog.clear()
        case = f"{document} {json.dumps(variables)[:300]}"
        response = await app.post({"query": document, "variables": variables})
        body = failures.answer(response, case, document + json.dumps(variables))
        if body is not None and body.get("data"):
            seen.add(document)
        for record in errors_logged(caplog.records):
            failures.add(f"error logged: {record}", case)
    if await app.partition("globex") != before:
        failures.add("another tenant's items changed", "globex")
    assert not failures, "\n" + failures.report()
    assert await app.partition("acme") != acme  # writes got through
    fields = {document for document, _ in drawn}
    assert len(seen) >= len(fields) // 4, (len(seen), len(fields))  # values that fit ran

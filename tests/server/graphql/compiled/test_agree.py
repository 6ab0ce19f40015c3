"""Compiled execution answers every operation byte for byte as Strawberry's executor does:
data, errors with their paths, extensions (cost, store calls and waves), status and media
type. The corpus (corpus.py), the benchmark's and docs' operations and hypothesis-graphql
operations run on one seeded store through both; the corpus's mutations run on two copies.
Queries answered in parts (keygraph/serve/parted.py, every list a few items at a time here)
answer alike too, but for how their reads fall into calls and waves. Queries run as an
admin and as a member; no answer to the member holds another user's email, address or
order."""

from __future__ import annotations

import base64
import gc
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import orjson
import pytest
from graphql import OperationType, parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_graphql import Mode, nodes, queries

from bench.queries import Q1, Q2, Q3, Q4, Q5, Q6
from generated.table import TABLE
from keygraph.store import Store
from server.api import sdl
from server.auth.tokens import issue_token
from server.edge.app import create_app
from server.seed.tenant import SeedSizes, seed
from server.settings import Limits, Settings
from tests.conftest import StoreFactory
from tests.doc_blocks import blocks as doc_blocks
from tests.server.conftest import SECRET
from tests.server.graphql.compiled.corpus import MUTATIONS, QUERIES, SEEDED_IDS, Seeded, seeded

pytestmark = pytest.mark.filterwarnings(
    # graphql-core drops the coroutines of fields it abandons after a failed non-null field
    "ignore:coroutine 'GraphQLCoreConverter.from_resolver.<locals>._async_resolver' was never"
    ":RuntimeWarning",
    "ignore::pytest.PytestUnraisableExceptionWarning",
)
SIZES = SeedSizes(users=8, orders=24, groups=3, org_nodes=9, org_depth=3, shops=12, max_members=5)
GENERATED = 500
"""hypothesis-graphql operations run on each store."""
REQUEST_ID = "agree"
BUDGET = Limits(tenant_budget=10**12, tenant_refill=10**12)
"""A budget no run drains, so `extensions.cost.budget` reads the same on both sides."""

PARTED = replace(BUDGET, stream_cost=0, part_objects=3)
"""Every query answered in parts of about three objects."""

Pair = tuple[httpx.AsyncClient, httpx.AsyncClient]


class Reads(NamedTuple):
    pair: Pair
    """Compiled execution and Strawberry's executor."""
    headers: dict[str, str]
    ids: Seeded
    kind: str
    parted: httpx.AsyncClient
    """Compiled execution answering every query in parts."""
    member: dict[str, str]
    """The headers of a member, the second seeded user (the first has an address)."""
    foreign: tuple[str, ...]
    """What the member may never read: other users' emails, order ids, address ids and
    address lines."""


def _settings(tmp_path: Path) -> Settings:
    return Settings(env="dev", data_dir=tmp_path, jwt_secret=SECRET, limits=BUDGET).resolved()


def _client(settings: Settings, store: Store) -> httpx.AsyncClient:
    app = create_app(settings, store)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


def _clients(settings: Settings, left: Store, right: Store) -> tuple[Pair, list[Any]]:
    clients = (_client(settings, left), _client(replace(settings, executor="strawberry"), right))
    return clients, list(clients)


def _headers(settings: Settings, sub: str = "agree", role: str = "admin") -> dict[str, str]:
    token = issue_token(settings, "acme", sub, roles=[role])
    return {"Authorization": f"Bearer {token}", "X-Request-Id": REQUEST_ID}


def _local(global_id: str) -> str:
    return base64.urlsafe_b64decode(global_id + "=" * (-len(global_id) % 4)).decode().split(":")[1]


async def _foreign(
    client: httpx.AsyncClient, headers: dict[str, str], ids: Seeded
) -> tuple[str, ...]:
    """What the member (ids.users[1]) may not read, asked as an admin."""
    query = "query($id: ID!) { user(id: $id) { orders(first: 100) { edges { node { id } } } } }"
    response = await client.post(
        "/graphql", json={"query": query, "variables": {"id": ids.users[1]}}, headers=headers
    )
    own = {edge["node"]["id"] for edge in response.json()["data"]["user"]["orders"]["edges"]}
    emails = [email for n, email in enumerate(ids.emails) if n != 1]
    orders = [order for order in ids.orders if order not in own]
    return (*emails, *orders, *ids.addresses, "1 Road")


async def _agree(
    pair: Pair, headers: dict[str, str], query: str, variables: Any, kind: str
) -> bytes:
    """Posts the operation through both executors; asserts equal answers, returns one.
    On DynamoDB Local, how calls fall into waves (calls overlapping in time) depends on its
    latency from one call to the next, so there only the wave counts may differ."""
    answers = []
    for client in pair:
        response = await client.post(
            "/graphql", json={"query": query, "variables": variables}, headers=headers
        )
        content = _without_cache_counts(response.content)
        answers.append((response.status_code, response.headers["content-type"], content))
    if answers[0] != answers[1]:
        assert answers[0][:2] == answers[1][:2], query
        _fewer_waves_or_abandoned_work(answers[0][2], answers[1][2], query, kind)
    return answers[0][2]


def _without_cache_counts(content: bytes) -> bytes:
    """The body without dev mode's document cache report, whose counts are each worker's
    since it started (the two clients have answered other requests)."""
    body = orjson.loads(content)
    body.get("extensions", {}).pop("documentCache", None)
    return orjson.dumps(body)


_COUNTERS = (("storeCalls",), ("cost", "actual", "storeCalls"), ("cost", "actual", "readUnits"))


def _fewer_waves_or_abandoned_work(
    compiled: bytes, strawberry: bytes, query: str, kind: str
) -> None:
    """The differences allowed, each in compiled execution's favour:
    - fewer store waves: it starts a field's loads in the step its parent's value arrives,
      where graphql-core may take a turn of the event loop per level;
    - less abandoned work: when a failed non-null field nulls a position while other fields
      still load, graphql-core lets those run on for a few turns (their errors and store
      calls reach the response or not by the loop's order), and compiled execution stops
      them. Its errors are then among Strawberry's, and on the embedded store its store calls
      and read units no more (their waves are not compared: they depend on when the work
      stopped; on DynamoDB Local so do the calls that finish before it stops, by latency).
      One exception, when the client's own argument fails a field (BAD_USER_INPUT): compiled
      execution starts an object's fields in one step, so a sibling's load queued before the
      failing field ran still goes out, where graphql-core may not have started that sibling.
    Everything else stays byte for byte."""
    left, right = orjson.loads(compiled), orjson.loads(strawberry)
    waves = left["extensions"].pop("storeWaves"), right["extensions"].pop("storeWaves")
    if orjson.dumps(left) == orjson.dumps(right):
        assert kind != "embedded" or waves[0] <= waves[1], query
        return
    assert orjson.dumps(left.get("data")) == orjson.dumps(right.get("data")), query
    mine, theirs = left.pop("errors", []), right.pop("errors", [])
    assert mine, query
    assert all(error in theirs for error in mine), query
    bad_input = all(error["extensions"]["code"] == "BAD_USER_INPUT" for error in mine)
    for path in _COUNTERS:
        *parents, name = path
        own, other = left["extensions"], right["extensions"]
        for parent in parents:
            own, other = own[parent], other[parent]
        mine_counted, theirs_counted = own.pop(name), other.pop(name)
        assert kind != "embedded" or bad_input or mine_counted <= theirs_counted, (query, path)
    assert orjson.dumps(left) == orjson.dumps(right), query


_SPLIT = (("storeWaves",), *_COUNTERS)
"""What reading in parts changes: a part's loads are a wave of their own, entities are
batched per part, and one an earlier part read is read again when a later one needs it."""


async def _agree_in_parts(
    reads: Reads, query: str, variables: Any, headers: dict[str, str] | None = None
) -> None:
    """Posts the operation in parts and through Strawberry's executor; asserts they answer
    alike but for the store calls, read units and waves parts split into."""
    answers = []
    for client in (reads.parted, reads.pair[1]):
        response = await client.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers=headers or reads.headers,
        )
        answers.append((response.status_code, response.headers["content-type"], response.content))
        assert int(response.headers["content-length"]) == len(response.content)
    assert answers[0][:2] == answers[1][:2], query
    bodies = []
    for _, _, content in answers:
        body = orjson.loads(_without_cache_counts(content))
        for *parents, name in _SPLIT:
            counters = body["extensions"]
            for parent in parents:
                counters = counters[parent]
            counters[name] = 0
        bodies.append(orjson.dumps(body))
    _fewer_waves_or_abandoned_work(bodies[0], bodies[1], query, reads.kind)


async def _seeded_ids(client: httpx.AsyncClient, headers: dict[str, str]) -> Seeded:
    response = await client.post("/graphql", json={"query": SEEDED_IDS}, headers=headers)
    return seeded(response.json()["data"])


@pytest.fixture(
    params=["embedded", pytest.param("dynamodb-local", marks=pytest.mark.dynamodb_local)]
)
async def reads(
    request: pytest.FixtureRequest, store_factory: StoreFactory, tmp_path: Path
) -> AsyncIterator[Reads]:
    """Both executors, and compiled execution in parts, over one seeded store, a user of
    which has an address."""
    store = await store_factory(request.param, TABLE)
    for tenant in ("acme", "globex"):
        await seed(store, tenant, SIZES, progress=False)
    settings = _settings(tmp_path)
    pair, clients = _clients(settings, store, store)
    headers = _headers(settings)
    ids = await _seeded_ids(pair[0], headers)
    added = await pair[0].post(
        "/graphql",
        json={
            "query": """mutation($id: ID!) { addAddress(input: {userId: $id, label: "Home",
              line1: "1 Road", city: "Berlin", postalCode: "10115", country: "DE"}) {
              address { id } } }""",
            "variables": {"id": ids.users[0]},
        },
        headers=headers,
    )
    assert "errors" not in added.json()
    parted = _client(replace(settings, limits=PARTED), store)
    try:
        ids = await _seeded_ids(pair[0], headers)
        member = _headers(settings, _local(ids.users[1]), "member")
        foreign = await _foreign(pair[0], headers, ids)
        yield Reads(pair, headers, ids, request.param, parted, member, foreign)
    finally:
        for client in [*clients, parted]:
            await client.aclose()
        gc.collect()  # the coroutines graphql-core dropped warn here, where it is expected


def _docs_queries() -> list[str]:
    return [
        block
        for block in doc_blocks("graphql")
        if all(
            getattr(d, "operation", None) is not OperationType.MUTATION
            for d in parse(block).definitions
        )
    ]


def _generated(ids: Seeded, count: int) -> list[str]:
    """`count` queries from the schema, valid and not, the same on every run, whose ids and
    strings are often the seeded ones."""
    every_id = [*ids.users, *ids.orders, *ids.groups, *ids.org_nodes, *ids.shops, *ids.addresses]
    scalars = {
        "ID": st.one_of(st.sampled_from(every_id), st.text(max_size=20)).map(nodes.String),
        "String": st.one_of(st.sampled_from(ids.emails), st.text(max_size=20)).map(nodes.String),
        "DateTime": st.sampled_from(
            ["2025-01-01T00:00:00+00:00", "2026-06-01T00:00:00+00:00", "soon"]
        ).map(nodes.String),
    }
    strategy = st.one_of(
        queries(sdl(), custom_scalars=scalars),
        queries(sdl(), custom_scalars=scalars),
        queries(sdl(), custom_scalars=scalars, mode=Mode.NEGATIVE),
    )
    found: list[str] = []

    @settings(
        max_examples=count,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(operation=strategy)
    def collect(operation: str) -> None:
        found.append(operation)

    collect()
    return found


def _fixed_queries(ids: Seeded) -> list[tuple[str, Any]]:
    """The corpus's, docs' and benchmark's queries, with their variables."""
    found = [case(ids) for case in QUERIES]
    found += [(query, {}) for query in _docs_queries()]
    user, group, node = ids.users[0], ids.groups[0], ids.org_nodes[0]
    found += [
        (Q1, {"id": user}),
        (Q2, {"id": user}),
        (Q3, {}),
        (Q4, {"id": group}),
        (Q5, {"id": node}),
        (Q6, {"lat": 52.52, "lng": 13.405}),
    ]
    return found


@pytest.mark.parametrize("caller", ["admin", "member"])
async def test_queries_answer_alike(reads: Reads, caller: str) -> None:
    headers = reads.headers if caller == "admin" else reads.member
    for query, variables in _fixed_queries(reads.ids):
        body = await _agree(reads.pair, headers, query, variables, reads.kind)
        await _agree_in_parts(reads, query, variables, headers)
        if caller == "member":
            _holds_nothing_foreign(body, reads.foreign, query)


def _holds_nothing_foreign(body: bytes, foreign: tuple[str, ...], query: str) -> None:
    """The data and execution errors of a member's answer hold no other user's email,
    order or address (validation errors may quote the operation's own text)."""
    answer = orjson.loads(body)
    held = orjson.dumps(
        [answer.get("data"), [e for e in answer.get("errors", []) if "path" in e]]
    ).decode()
    assert not [value for value in foreign if value in held], query


@pytest.mark.parametrize("caller", ["admin", "member"])
async def test_generated_queries_answer_alike(reads: Reads, caller: str) -> None:
    headers = reads.headers if caller == "admin" else reads.member
    answered = 0
    for index, query in enumerate(_generated(reads.ids, GENERATED)):
        body = await _agree(reads.pair, headers, query, {}, reads.kind)
        answered += b'"data":{' in body
        if reads.kind == "embedded" or index % 5 == 0:
            await _agree_in_parts(reads, query, {}, headers)
        if caller == "member":
            _holds_nothing_foreign(body, reads.foreign, query)
    assert answered > GENERATED // 3  # most ran, not only failed validation


@pytest.fixture(
    params=["embedded", pytest.param("dynamodb-local", marks=pytest.mark.dynamodb_local)]
)
async def writes(
    request: pytest.FixtureRequest, store_factory: StoreFactory, tmp_path: Path
) -> AsyncIterator[tuple[Pair, dict[str, str], Seeded, str]]:
    """Each executor over its own copy of the same seeded data."""
    copies = []
    for _ in range(2):
        store = await store_factory(request.param, TABLE)
        await seed(store, "acme", SIZES, progress=False)
        copies.append(store)
    settings = _settings(tmp_path)
    pair, clients = _clients(settings, copies[0], copies[1])
    headers = _headers(settings)
    assert await _seeded_ids(pair[0], headers) == await _seeded_ids(pair[1], headers)
    try:
        yield pair, headers, await _seeded_ids(pair[0], headers), request.param
    finally:
        for client in clients:
            await client.aclose()
        gc.collect()  # the coroutines graphql-core dropped warn here, where it is expected


async def test_mutations_answer_alike(
    writes: tuple[Pair, dict[str, str], Seeded, str],
) -> None:
    pair, headers, ids, kind = writes
    for case in MUTATIONS:
        query, variables = case(ids)
        await _agree(pair, headers, query, variables, kind)
    after = """{ users(first: 20) { edges { node { email name version addresses { label }
      orders(first: 30) { edges { node { status totalCents version } } } } } } }"""
    await _agree(pair, headers, after, {}, kind)  # and the data after them, less new ids

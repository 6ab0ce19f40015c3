"""Documents with inline literals answer the same whether their literals are normalised into
variables (keygraph/serve/literals.py) or every text is prepared as written: random values
at every argument of every query (tests/server/fuzz/positions.py), written as literals, go
to both executors both ways, and each pair of answers (status, media type, body but for the
worker's document cache report) must be equal byte for byte: data, errors with their
messages, locations and codes, and extensions.cost.

Every document ends in a field that fails after the value, whose location moves with it.
Each document follows a valid one of its place, so that the shape is known and the values
are taken by coercion against it rather than by parsing: a good share of the documents must
be answered that way, else the test would not test it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import httpx
import orjson
import pytest
from hypothesis import strategies as st

from generated.table import TABLE
from server.auth.tokens import issue_token
from server.edge.app import create_app
from server.seed.tenant import seed
from server.settings import Limits, Settings
from tests.conftest import StoreFactory
from tests.server.conftest import SECRET
from tests.server.fuzz.checks import Failures
from tests.server.fuzz.positions import Baseline, Position, operation, positions
from tests.server.fuzz.target import SIZES, Target, budget, generate
from tests.server.fuzz.values import WRONG_TYPES, Hostile, own_type

EXAMPLES = 160
"""Random cases per run in CI, besides every place's own edges."""
SHARE_BY_SHAPE = 0.3
"""The least share of documents the normalised side must answer from a shape, of those
with each place's own edges and wrong types (random values, which a hunt draws many of,
mostly fail validation, and a document that fails is never kept by its shape)."""
UNLIMITED = Limits(tenant_budget=10**12, tenant_refill=10**12)
"""A budget no run drains, so that `extensions.cost.budget` reads the same on both sides."""
TAIL = ' tail: user(id: "nope") { id } }'
"""A field after the value that always fails, so that an error's location follows it."""
HEADERS = {"X-Request-Id": "literals", "content-type": "application/json"}

SCALARS = st.one_of(
    st.text(max_size=12),
    st.integers(-(2**33), 2**33),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.sampled_from(["2026-01-01T00:00:00+00:00", "2026-01-01", "", "\\", '"', '"""']),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=5,
)


class Sides(NamedTuple):
    """One executor's app with literals normalised, and one preparing every text."""

    normalised: httpx.AsyncClient
    written: httpx.AsyncClient


@pytest.fixture
async def apps(
    store_factory: StoreFactory, tmp_path: Path
) -> AsyncIterator[tuple[dict[str, Sides], dict[str, str], list[str]]]:
    store = await store_factory("embedded", TABLE)
    for tenant in ("acme", "globex"):
        await seed(store, tenant, SIZES, progress=False)
    settings = Settings(
        env="dev", data_dir=tmp_path, jwt_secret=SECRET, limits=UNLIMITED
    ).resolved()
    clients = []
    sides = {}
    for executor in ("compiled", "strawberry"):
        pair = []
        for normalise in (True, False):
            app = create_app(replace(settings, executor=executor), store)
            app.graphql.schema.preparation.normalise = normalise  # type: ignore[attr-defined]
            transport = httpx.ASGITransport(app=app)
            pair.append(httpx.AsyncClient(transport=transport, base_url="http://t"))
        sides[executor] = Sides(*pair)
        clients += pair
    auth = {"Authorization": f"Bearer {issue_token(settings, 'acme', roles=['admin'])}"}
    ids, _ = await Target.of(clients[0], settings, store).ids(("acme",))
    try:
        yield sides, auth, ids
    finally:
        for client in clients:
            await client.aclose()


def cases(baseline: Baseline) -> list[tuple[Position, Hostile, bool]]:
    """Every query place's own edges and wrong types, then random values at random places
    (each with whether it was drawn at random)."""
    places = [position for position in positions() if position.operation == "query"]
    fixed = [
        (position, hostile, False)
        for position in places
        for hostile in own_type(position.type, "User") + WRONG_TYPES
    ]
    drawn = generate(st.tuples(st.sampled_from(places), VALUES), budget(EXAMPLES))
    return fixed + [(place, Hostile(repr(value)[:60], value), True) for place, value in drawn]


def _answer(response: httpx.Response) -> tuple[int, str, bytes, str | None]:
    """Status, media type and body but for the cache report; how the document was found."""
    body = orjson.loads(response.content)
    report = body.get("extensions", {}).pop("documentCache", None)
    found = None if report is None else report["request"]
    return response.status_code, response.headers["content-type"], orjson.dumps(body), found


async def test_normalised_literals_answer_as_written(
    apps: tuple[dict[str, Sides], dict[str, str], list[str]],
) -> None:
    sides, auth, ids = apps
    baseline = Baseline(ids)
    headers = {**HEADERS, **auth}
    failures = Failures()
    by_shape = sent = 0
    for position, hostile, random in cases(baseline):
        primer, document = (
            operation(position, baseline, value, False)[0][:-1] + TAIL
            for value in (lambda valid: valid, hostile)
        )
        case = f"{position} = {hostile!r}: {document[:300]}"
        for executor, pair in sides.items():
            for text in (primer, document):
                answers = []
                for client in pair:
                    body = orjson.dumps({"query": text})
                    response = await client.post("/graphql", content=body, headers=headers)
                    failures.status(response, f"{executor} {case}")
                    answers.append(_answer(response))
                if answers[0][:3] != answers[1][:3]:
                    failures.add(f"{executor}: normalised answer differs", f"{case}\n{answers}")
                if text is document and not random:
                    sent += 1
                    by_shape += answers[0][3] == "shape"
    assert not failures, "\n" + failures.report()
    assert by_shape >= SHARE_BY_SHAPE * sent, (by_shape, sent)

"""The whole schema fuzzed with hypothesis-graphql against the app on both stores: valid
operations (queries and mutations, with arbitrary arguments) and invalid ones. No answer is
a 5xx or an INTERNAL error, none carries a traceback or a source path, and the other tenant's
data is the same afterwards. Hostile values, documents, bodies and races: tests/server/fuzz/."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis_graphql import Mode, from_schema, nodes

from server.api import sdl
from tests.conftest import StoreFactory
from tests.server.fuzz.target import HUNT, STORES, Target, check_answer, generate, open_target

EXAMPLES = {"embedded": 600, "dynamodb-local": 200}


def operations(ids: list[str], emails: list[str]) -> st.SearchStrategy[str]:
    """Valid and invalid operations whose ids and strings are often real ones (both
    tenants'), else arbitrary."""
    scalars = {
        "DateTime": st.one_of(
            st.datetimes(timezones=st.just(UTC)).map(lambda d: nodes.String(d.isoformat())),
            st.text(max_size=30).map(nodes.String),
        ),
        "ID": st.one_of(st.sampled_from(ids), st.text(max_size=40)).map(nodes.String),
        "String": st.one_of(st.sampled_from(emails), st.text(max_size=40)).map(nodes.String),
    }
    return st.one_of(
        from_schema(sdl(), custom_scalars=scalars),
        from_schema(sdl(), custom_scalars=scalars, mode=Mode.NEGATIVE),
    )


@pytest.fixture(params=STORES)
async def target(
    request: pytest.FixtureRequest, store_factory: StoreFactory, tmp_path: Path
) -> AsyncIterator[tuple[Target, str]]:
    async with open_target(request.param, store_factory, tmp_path) as app:
        yield app, request.param


async def test_fuzzed_operations_fail_cleanly_and_stay_in_their_tenant(
    target: tuple[Target, str],
) -> None:
    app, kind = target
    before = await app.snapshot()
    seen: dict[str, int] = {}
    ids, emails = await app.ids()
    for operation in generate(operations(ids, emails), HUNT or EXAMPLES[kind]):
        response = await app.client.post("/graphql", json={"query": operation}, headers=app.acme)
        body = check_answer(response, operation)
        for error in body.get("errors", []):
            code = error["extensions"]["code"]
            seen[code] = seen.get(code, 0) + 1
    assert await app.snapshot() == before
    assert seen.get("GRAPHQL_VALIDATION_FAILED", 0) > 0  # the invalid ones were refused

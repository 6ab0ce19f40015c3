"""This repository's API as `keygraph serve --package generated --extend server.extension`
serves it, fuzzed with hypothesis-graphql on both stores: valid and invalid queries and
mutations drawn from the served schema, with ids and emails often real ones (both tenants'),
floats past any position and ints at Int's edges, sent by an admin of one tenant and by a
member. No answer is a 5xx or an INTERNAL error, none carries a traceback or a source path,
none logs an error, and the other tenant's items are the same afterwards. Hostile bodies and
documents: test_repository_hostile.py."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from graphql import FloatValueNode, StringValueNode, build_schema
from hypothesis import strategies as st
from hypothesis_graphql import Mode, from_schema, mutations, nodes

from keygraph.api.ids import parse_global_id
from keygraph.errors import BadArgument
from tests.conftest import StoreFactory
from tests.keygraph.api.served_target import IDS, open_served, sdl, token
from tests.keygraph.api.served_variables import TIMES
from tests.server.fuzz.target import (
    HUNT,
    STORES,
    Target,
    check_answer,
    errors_logged,
    generate,
)

EXAMPLES = 300
"""Operations sent on each store: enough that some of its writes get through."""
FLOATS = ("1e400", "-1e400", "1e-400", "1.7976931348623157e308", "-0.0", "91", "-180.0000001")
"""Float literals past any position (two parse to infinity, one to zero) and at its edges."""


def operations(schema: str, ids: list[str], emails: list[str]) -> st.SearchStrategy[str]:
    """Valid and invalid operations of the served schema, and mutations of one field (an
    error in one field of several nulls them all), whose ids and strings are often real ones
    (both tenants'), else arbitrary; floats and ints at their edges."""

    def text(strings: st.SearchStrategy[str]) -> st.SearchStrategy[StringValueNode]:
        return strings.map(nodes.String)

    scalars = {
        "DateTime": text(st.one_of(TIMES, st.text(max_size=30))),
        "Long": st.integers(min_value=-(2**70), max_value=2**70).map(nodes.Int),
        "ID": text(
            st.one_of(*(st.sampled_from(pool) for pool in _pools(ids)), st.text(max_size=40))
        ),
        "String": text(st.one_of(st.emails(), st.sampled_from(emails), st.text(max_size=40))),
        "Float": st.one_of(
            st.floats(min_value=-200, max_value=200).map(nodes.Float),
            st.floats(allow_nan=False, allow_infinity=False).map(nodes.Float),
            st.sampled_from(FLOATS).map(lambda literal: FloatValueNode(value=literal)),
        ),
        "Int": st.one_of(
            st.integers(min_value=-1, max_value=5),
            st.integers(min_value=-(2**31), max_value=2**31 - 1),
        ).map(nodes.Int),
    }
    written = build_schema(schema).mutation_type
    assert written is not None
    one_write = st.sampled_from(sorted(written.fields)).flatmap(
        lambda name: mutations(schema, fields=[name], custom_scalars=scalars)
    )
    return st.one_of(
        from_schema(schema, custom_scalars=scalars),
        from_schema(schema, custom_scalars=scalars, mode=Mode.NEGATIVE),
        one_write,
    )


def _pools(ids: list[str]) -> list[list[str]]:
    """The global ids, then the local ones (hypothesis draws a list's first items most)."""
    found = [i for i in ids if _global(i)]
    return [pool for pool in (found, [i for i in ids if i not in found]) if pool]


def _global(text: str) -> bool:
    try:
        parse_global_id(text)
    except BadArgument:
        return False
    return True


@pytest.fixture(params=STORES)
async def target(
    request: pytest.FixtureRequest, store_factory: StoreFactory
) -> AsyncIterator[tuple[Target, str]]:
    async with open_served(request.param, store_factory) as (app, served):
        yield app, sdl(served)


async def test_fuzzed_operations_fail_cleanly_and_stay_in_their_tenant(
    target: tuple[Target, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    app, schema = target
    before = await app.partition("globex")
    acme = await app.partition("acme")
    ids, emails = await app.ids(query=IDS)
    first = await app.post({"query": "{ users(first: 1) { edges { node { userId } } } }"})
    member = token("acme", first.json()["data"]["users"]["edges"][0]["node"]["userId"], "member")
    callers = [app.acme, member]
    seen: dict[str, int] = {}
    for n, operation in enumerate(generate(operations(schema, ids, emails), HUNT or EXAMPLES)):
        caplog.clear()
        response = await app.client.post(
            "/graphql", json={"query": operation}, headers=callers[n % len(callers)]
        )
        body = check_answer(response, operation)
        assert not errors_logged(caplog.records), (operation, errors_logged(caplog.records))
        for error in body.get("errors", []):
            code = error["extensions"]["code"]
            seen[code] = seen.get(code, 0) + 1
    assert await app.partition("globex") == before
    assert await app.partition("acme") != acme  # some writes got through
    assert seen.get("GRAPHQL_VALIDATION_FAILED", 0) > 0  # the invalid ones were refused

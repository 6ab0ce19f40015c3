"""Hostile values at every place in the schema a client puts one (tests/server/fuzz/
positions.py walks the schema for them), as variables and as inline literals, on both
stores. Every answer has a code and is never a 5xx or INTERNAL, no error is logged, a
rejected mutation writes nothing, the fuzzed tenant's data still reads, and the other
tenant's is unchanged.

CI runs an even spread of the places' own edges and of wrong types (each case in one of the
two forms, alternating); KEYGRAPH_FUZZ_EXAMPLES=N runs every case in both forms, hostile ids
of every type, and N random JSON values at random places besides."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from graphql import (
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    get_named_type,
)
from hypothesis import strategies as st

from server.graphql.ids import from_global_id
from tests.conftest import StoreFactory
from tests.server.fuzz.checks import Failures
from tests.server.fuzz.positions import (
    SCHEMA,
    Baseline,
    Position,
    operation,
    pick,
    positions,
)
from tests.server.fuzz.target import HUNT, STORES, Target, errors_logged, generate, open_target
from tests.server.fuzz.values import ALL_IDS, WRONG_TYPES, Hostile, own_type
from tests.server.reachable import reachable

EXAMPLES = {"embedded": 1200, "dynamodb-local": 500}
WRONG_PER_PLACE = 3
INT32_MAX = 2**31 - 1
Case = tuple[Position, Hostile, bool]


@pytest.fixture(params=STORES)
async def target(
    request: pytest.FixtureRequest, store_factory: StoreFactory, tmp_path: Path
) -> AsyncIterator[tuple[Target, str]]:
    async with open_target(request.param, store_factory, tmp_path) as app:
        yield app, request.param


def expected_id_type(position: Position, baseline: Baseline) -> str:
    """The type of the ids that belong at `position` (none for a place of another type)."""
    if get_named_type(position.type).name != "ID":
        return ""
    valid = baseline.value(position.argument_type, position.argument, position.steps[-1])
    found = pick(valid, position.inner)
    if isinstance(found, str):
        return from_global_id(found)[0]
    hint = next((p for p in reversed(position.inner) if isinstance(p, str)), position.argument)
    return from_global_id(baseline.id_for(hint, position.steps[-1]))[0]


def cases(baseline: Baseline, count: int) -> list[Case]:
    """A hunt: every place's own edges, every wrong type and hostile ids of every type, in
    both forms. CI: `count` of every place's own edges and three wrong types, spread evenly
    over the places, the forms alternating."""
    pairs: list[tuple[Position, Hostile]] = []
    wrong_at = 0
    for position in positions():
        own = own_type(position.type, expected_id_type(position, baseline))
        if HUNT:
            extra = ALL_IDS if get_named_type(position.type).name == "ID" else []
            pairs += [(position, hostile) for hostile in own + WRONG_TYPES + extra]
            continue
        wrong = [WRONG_TYPES[(wrong_at + k) % len(WRONG_TYPES)] for k in range(WRONG_PER_PLACE)]
        wrong_at += WRONG_PER_PLACE
        pairs += [(position, hostile) for hostile in own + wrong]
    if HUNT:
        return [(p, h, form) for p, h in pairs for form in (True, False)]
    step = max(1.0, len(pairs) / count)
    chosen = [pairs[int(k * step)] for k in range(min(count, len(pairs)))]
    return [(p, h, k % 2 == 0) for k, (p, h) in enumerate(chosen)]


def test_the_walk_reaches_every_argument_of_the_schema() -> None:
    """Every argument of every field a query or mutation can reach is one of the places
    fuzzed (subscriptions are not sent over HTTP: tests/server/realtime/ covers theirs)."""
    every = {
        (kind.name, name, argument)
        for kind in map(
            SCHEMA.get_type, reachable(SCHEMA, [SCHEMA.query_type, SCHEMA.mutation_type])
        )
        if isinstance(kind, GraphQLObjectType) and not kind.name.startswith("__")
        for name, spec in kind.fields.items()
        for argument in spec.args
    }
    reached = set()
    for position in positions():
        parent = SCHEMA.query_type if position.operation == "query" else SCHEMA.mutation_type
        for step in position.steps[:-1]:
            assert isinstance(parent, GraphQLObjectType)
            parent = get_named_type(parent.fields[step].type)
        assert isinstance(parent, GraphQLObjectType)
        reached.add((parent.name, position.steps[-1], position.argument))
    assert every == reached


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)


def random_cases(count: int) -> list[Case]:
    """`count` random JSON values at random places, in either form."""
    drawn = generate(st.tuples(st.sampled_from(positions()), JSON, st.booleans()), count)
    return [(position, Hostile(repr(value)[:60], value), form) for position, value, form in drawn]


async def test_hostile_values_are_refused_cleanly_and_change_nothing(
    target: tuple[Target, str], caplog: pytest.LogCaptureFixture
) -> None:
    app, kind = target
    caplog.set_level(logging.WARNING)
    bystander = await app.snapshot()
    ids, _ = await app.ids(("acme",))
    baseline = Baseline(ids)
    failures = Failures()
    items = await app.items()
    for position, hostile, as_variable in cases(baseline, EXAMPLES[kind]) + random_cases(HUNT):
        document, variables = operation(position, baseline, hostile, as_variable)
        case = f"{position} = {hostile!r} as {'variable' if as_variable else 'literal'}"
        caplog.clear()
        response = await app.post({"query": document, "variables": variables})
        body = failures.answer(response, case)
        for record in errors_logged(caplog.records):
            failures.add(f"error logged: {record}", case)
        if position.operation != "mutation":
            continue
        after = await app.items()
        data = body.get("data") if body else None
        if not (isinstance(data, dict) and data.get(position.steps[-1])) and after != items:
            failures.add("a refused mutation wrote", f"{case}: {_changed(items, after)}")
        items = after
    await _still_readable(app, failures)
    if await app.snapshot() != bystander:
        failures.add("the other tenant's data changed", "globex")
    assert not failures, "\n" + failures.report()


def summed_places() -> list[Position]:
    """Input objects of mutations with two Int fields or more: values each accepted alone
    may together (a product, a sum over a list) pass what an Int holds."""
    found = []
    for position in positions():
        kind = position.type.of_type if isinstance(position.type, GraphQLNonNull) else None
        if position.operation != "mutation" or not isinstance(kind, GraphQLInputObjectType):
            continue
        ints = [f for f, spec in kind.fields.items() if get_named_type(spec.type).name == "Int"]
        if len(ints) >= 2:
            found.append(position)
    return found


async def _largest_accepted(accepts: Callable[[int], Awaitable[bool]], top: int) -> int:
    """The largest n in [1, top] that `accepts` takes (it takes 1, and every n below one
    it takes); 0 when it refuses 1."""
    if not await accepts(1):
        return 0
    low, high = 1, top
    while low < high:
        middle = (low + high + 1) // 2
        if await accepts(middle):
            low = middle
        else:
            high = middle - 1
    return low


async def test_the_largest_accepted_values_together_stay_readable(
    target: tuple[Target, str], caplog: pytest.LogCaptureFixture
) -> None:
    """At each place of summed_places, find the largest value each Int field accepts alone
    (and, in a list, the most elements), then send them all at once: the answer is accepted
    or refused with a code, and what it wrote still reads."""
    app, _ = target
    caplog.set_level(logging.WARNING)
    baseline = Baseline((await app.ids(("acme",)))[0])
    failures = Failures()
    places = summed_places()
    assert places, "the schema has no input object with two Int fields"
    for position in places:
        await _send_largest(app, baseline, failures, position)
    for record in errors_logged(caplog.records):
        failures.add(f"error logged: {record}", "the largest accepted values")
    await _still_readable(app, failures)
    assert not failures, "\n" + failures.report()


async def _send_largest(
    app: Target, baseline: Baseline, failures: Failures, position: Position
) -> None:
    kind = get_named_type(position.type)
    assert isinstance(kind, GraphQLInputObjectType)
    valid = pick(
        baseline.value(position.argument_type, position.argument, position.steps[-1]),
        position.inner,
    )

    async def accepts(value: Any, at: Position = position) -> bool:
        document, variables = operation(at, baseline, lambda _: value, as_variable=True)
        response = await app.post({"query": document, "variables": variables})
        body = failures.answer(response, f"{at} = {json.dumps(value)[:200]}")
        return body is not None and not body.get("errors")

    async def accepts_at(name: str, value: int) -> bool:
        return await accepts({**valid, name: value})

    largest = dict(valid)
    for name, spec in kind.fields.items():
        if get_named_type(spec.type).name == "Int":
            largest[name] = await _largest_accepted(partial(accepts_at, name), INT32_MAX)
    await accepts(largest)
    if position.inner and isinstance(position.inner[-1], int):
        container = Position(
            position.operation,
            position.steps,
            position.argument,
            position.argument_type,
            position.inner[:-1],
            GraphQLNonNull(GraphQLList(position.type)),
        )
        await _largest_accepted(lambda count: accepts([largest] * count, container), 1000)


async def _still_readable(target: Target, failures: Failures) -> None:
    """The fuzzed tenant's data reads without errors after the run."""
    try:
        await target.snapshot(target.acme)
    except AssertionError as exc:
        failures.add("acme's data no longer reads", str(exc)[:300])


def _changed(before: list[Any], after: list[Any]) -> str:
    gone = [f"{i['PK']}|{i['SK']}" for i in before if i not in after]
    new = [f"{i['PK']}|{i['SK']}" for i in after if i not in before]
    return json.dumps({"removed or changed": gone[:3], "added or changed": new[:3]})[:300]

"""Compiled execution against graphql-core's on documents hypothesis-graphql draws from the
API this repository's spec gives (aliases, fragments, @skip/@include), on seeded data, for
the table's own caller and a member whom some rules refuse: the two answer the same bytes,
with one difference allowed, in compiled execution's favour. When a failed non-null field
nulls a position while other fields still load, graphql-core lets those run on and report
their errors, where compiled execution stops them: the data is then the same, and its
errors are among graphql-core's."""

from __future__ import annotations

import gc
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import Any

import orjson
from graphql import GraphQLSchema, OperationDefinitionNode, parse
from graphql.execution.values import VariableValues
from hypothesis import strategies as st
from hypothesis_graphql import nodes, queries

from keygraph.api import ApiContext, execute
from keygraph.caller import Caller
from keygraph.execution.plan import Compiler, Unsupported
from keygraph.store import Session
from server.seed.tenant import SeedSizes, seed
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CODEC, ROOT, Compiled
from tests.keygraph.api.test_compiled_agree import IGNORE_GRAPHQL_CORE, both
from tests.server.fuzz.target import HUNT, generate

SIZES = SeedSizes(users=5, orders=3, groups=2, org_nodes=4, org_depth=2, shops=3, max_members=3)
EXAMPLES = 250
CALLERS = (None, Caller("user-1", frozenset({"member"})))


@IGNORE_GRAPHQL_CORE
async def test_compiled_and_graphql_core_agree_on_drawn_documents(
    store_factory: StoreFactory, compiled: Callable[[Path], Compiled]
) -> None:
    package = compiled(ROOT / "access_patterns.toml")
    store = await store_factory("embedded", package.table)
    await seed(store, "acme", SIZES, progress=False)
    listed = await execute(
        package.schema,
        "{ users(first: 5) { edges { node { userId groupIds } } } }",
        ApiContext(Session(store, CODEC), "acme"),
    )
    users = [edge["node"] for edge in listed["data"]["users"]["edges"]]
    ids = [user["userId"] for user in users] + [g for u in users for g in u["groupIds"] or ()]
    scalars = {
        "ID": st.one_of(st.sampled_from(ids), st.text(max_size=8)).map(nodes.String),
        "Int": st.integers(min_value=0, max_value=3).map(nodes.Int),
        "Long": st.integers(min_value=0, max_value=3).map(nodes.Int),
        "DateTime": st.datetimes(timezones=st.just(UTC)).map(lambda d: nodes.String(d.isoformat())),
        "Date": st.dates().map(lambda d: nodes.String(d.isoformat())),
    }
    sdl = package.module("api").API.sdl
    strategy = queries(sdl, custom_scalars=scalars)
    compared = planned = 0
    for document in generate(strategy, HUNT or EXAMPLES):
        planned += _plans(package.schema, document)
        for caller in CALLERS:
            answers = await both(package.schema, document, store, caller)
            if answers[0] != answers[1]:
                _abandoned_work(orjson.loads(answers[0]), orjson.loads(answers[1]), document)
            compared += 1
    assert compared >= 2 * (HUNT or EXAMPLES) * 0.9
    assert planned >= compared / 2 * 0.9  # compiled execution ran, not its fallback
    gc.collect()


def _plans(schema: GraphQLSchema, document: str) -> bool:
    """Whether the compiler plans the document (else graphql-core runs it)."""
    operation = parse(document).definitions[0]
    assert isinstance(operation, OperationDefinitionNode)
    try:
        Compiler(schema, {}, VariableValues({}, {}), operation).compile()
    except Unsupported:
        return False
    return True


def _abandoned_work(mine: dict[str, Any], theirs: dict[str, Any], document: str) -> None:
    """The one difference allowed (module docstring)."""
    assert mine["data"] == theirs["data"], document
    errors = mine.get("errors", [])
    assert errors, document
    assert all(error in theirs.get("errors", []) for error in errors), document
    assert len(errors) < len(theirs["errors"]), document

"""Compiled execution (keygraph/execution) answers a generated API as graphql-core's
executor does, byte for byte: for this repository's spec on seeded data and every valid
golden case, each root field with everything below it to a few levels (relations, unions,
connections), asked by the table's own caller and by a member whom field rules refuse."""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    get_named_type,
    is_leaf_type,
    parse,
)
from graphql.execution.values import VariableValues

from generated import authz
from generated.api import API
from generated.table import TABLE
from keygraph.api import ApiContext, executable, execute
from keygraph.caller import Caller
from keygraph.execution.plan import Compiler
from keygraph.serve import Served
from keygraph.serve.package import extension_at
from keygraph.store import Session, Store
from keygraph.tokens import TokenKey, issue
from server.seed.tenant import SeedSizes, seed
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CODEC, ROOT, SECRET, Compiled, post, served_client
from tests.keygraph.api.serving import unreported
from tests.keygraph.api.test_generated_api import SPECS, _sample

SIZES = SeedSizes(users=6, orders=5, groups=2, org_nodes=4, org_depth=2, shops=3, max_members=3)
CALLERS = (None, Caller("user-1", frozenset({"member"})))
DEPTH = 6
UNAWAITED = "coroutine .* was never awaited"
IGNORE_GRAPHQL_CORE = pytest.mark.filterwarnings(f"ignore:{UNAWAITED}:RuntimeWarning")
"""For tests running graphql-core's executor too, which end with a full collection so that
none of its coroutines is collected in another test."""
LIST_IDS = "{ users(first: 5) { edges { node { userId } } } }"


def _arguments(field: GraphQLField) -> str:
    """Literal arguments for the field: `first: 3` where it pages, a sample for each one it
    needs."""
    given = []
    for name, argument in field.args.items():
        if name == "first":
            given.append("first: 3")
        elif isinstance(argument.type, GraphQLNonNull):
            given.append(f"{name}: {_literal(argument.type, _sample(argument.type))}")
    return f"({', '.join(given)})" if given else ""


def _literal(kind: Any, value: Any) -> str:
    """The value as a GraphQL literal of the type."""
    named = get_named_type(kind)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(named, item) for item in value) + "]"
    if isinstance(named, GraphQLInputObjectType):
        fields = named.fields
        inner = ", ".join(f"{k}: {_literal(fields[k].type, v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(named, GraphQLEnumType) or named.name in {"Int", "Long", "Float"}:
        return str(value)
    return orjson.dumps(value).decode()


def _select(schema: GraphQLSchema, named: GraphQLNamedType, depth: int) -> str:
    """Every field of the type that takes literal arguments, to `depth` levels of objects."""
    if isinstance(named, GraphQLUnionType | GraphQLInterfaceType):
        parts = [
            f"... on {possible.name} {_select(schema, possible, depth)}"
            for possible in schema.get_possible_types(named)
        ]
        return "{ __typename " + " ".join(parts) + " }"
    assert isinstance(named, GraphQLObjectType)
    parts = ["__typename"]
    for name, field in named.fields.items():
        arguments = _arguments(field)
        inner = get_named_type(field.type)
        if is_leaf_type(inner):
            parts.append(name + arguments)
        elif depth > 0:
            parts.append(f"{name}{arguments} {_select(schema, inner, depth - 1)}")
    return "{ " + " ".join(parts) + " }"


def _documents(schema: GraphQLSchema) -> list[str]:
    query = schema.query_type
    assert query is not None
    found = []
    for name, field in query.fields.items():
        inner = get_named_type(field.type)
        found.append(f"{{ {name}{_arguments(field)} {_select(schema, inner, DEPTH)} }}")
    return found


async def both(
    schema: GraphQLSchema, document: str, store: Store, caller: Caller | None
) -> tuple[bytes, bytes]:
    """The document's answers, compiled and by graphql-core, each once the tasks it started
    are done and what it left is collected: a resolver's coroutine compiled execution drops
    unawaited fails the test; graphql-core drops some when it cancels the siblings of a
    failed field (IGNORE_GRAPHQL_CORE)."""
    answers = []
    for compiled_run in (True, False):
        with warnings.catch_warnings():
            if compiled_run:  # every coroutine it drops unawaited raises, at once or collected
                warnings.filterwarnings("error", UNAWAITED, RuntimeWarning)
            before = asyncio.all_tasks()
            context = ApiContext(Session(store, CODEC, caller), "acme")
            answer = await execute(schema, document, context, compiled=compiled_run)
            answers.append(orjson.dumps(answer))
            while started := {task for task in asyncio.all_tasks() - before if not task.done()}:
                await asyncio.wait(started)
            gc.collect(1)  # the young generations: what this run left
    return answers[0], answers[1]


@IGNORE_GRAPHQL_CORE
@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.parent.name)
async def test_compiled_and_graphql_core_answer_the_same_bytes(
    spec: Path, kind: str, store_factory: StoreFactory, compiled: Callable[[Path], Compiled]
) -> None:
    package = compiled(spec)
    store = await store_factory(kind, package.table)
    if spec.parent == ROOT:
        await seed(store, "acme", SIZES, progress=False)
    documents = _documents(package.schema)
    assert documents
    for document in documents:
        operation = parse(document).definitions[0]
        Compiler(package.schema, {}, VariableValues({}, {}), operation).compile()  # type: ignore[arg-type]
        for caller in CALLERS:
            compiled_answer, core_answer = await both(package.schema, document, store, caller)
            assert compiled_answer == core_answer, (document, caller)
    gc.collect()


async def test_a_variable_inside_a_list_or_input_is_read_on_every_request(
    store_factory: StoreFactory,
) -> None:
    schema = executable(API, [extension_at("server.extension", "generated")], authz)
    store = await store_factory("embedded", TABLE)
    await seed(store, "acme", SIZES, progress=False)
    listed = await execute(schema, LIST_IDS, ApiContext(Session(store, CODEC), "acme"))
    ids = [edge["node"]["userId"] for edge in listed["data"]["users"]["edges"]]
    many = "mutation($name: String!) { createGroup(input: { name: $name }) { name } }"
    admin = {"authorization": f"Bearer {issue(SECRET, 'acme', 'boss', roles=['admin'])}"}
    async with served_client(Served(schema, store, TokenKey(SECRET), CODEC)) as client:
        for user in ids[:3]:  # one kept document and plan: each request's value, not the first's
            name = f"group of {user}"
            answer = await post(client, {"query": many, "variables": {"name": name}}, **admin)
            assert unreported(answer.json()) == {"data": {"createGroup": {"name": name}}}
